module modelplane.dev/bench/null-extender

go 1.22
