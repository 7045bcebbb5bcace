// A scheduler extender that decides nothing: the anchor for what kube-scheduler's extender
// protocol costs a scheduling cycle on its own (bench/extender/cycle.sh). It reads the
// candidate names kube-scheduler sends (nodeCacheCapable: true) and answers, over the Go
// standard library's HTTP server and encoding/json (kube-scheduler's own), that every
// candidate passes (filter) and scores 0 (prioritize). Only the names are decoded; the Pod is
// skipped, as a decoder that knows no field of it must still scan it.
package main

import (
	"encoding/json"
	"flag"
	"log"
	"net/http"
)

type extenderArgs struct {
	NodeNames *[]string `json:"NodeNames"`
}

type filterResult struct {
	NodeNames   *[]string         `json:"NodeNames"`
	FailedNodes map[string]string `json:"FailedNodes"`
	Error       string            `json:"Error"`
}

type hostPriority struct {
	Host  string `json:"Host"`
	Score int64  `json:"Score"`
}

// The request body is bounded, well above anything kube-scheduler sends (an anchor should
// refuse no request the real extender would take).
const maxBody = 64 << 20

func readArgs(w http.ResponseWriter, r *http.Request) (extenderArgs, bool) {
	var args extenderArgs
	if r.Method != http.MethodPost {
		http.Error(w, "POST only", http.StatusMethodNotAllowed)
		return args, false
	}
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxBody)).Decode(&args); err != nil {
		http.Error(w, "bad ExtenderArgs: "+err.Error(), http.StatusBadRequest)
		return args, false
	}
	if args.NodeNames == nil {
		http.Error(w, "NodeNames missing (nodeCacheCapable: true expected)", http.StatusBadRequest)
		return args, false
	}
	return args, true
}

func reply(w http.ResponseWriter, value any) {
	w.Header().Set("Content-Type", "application/json")
	if err := json.NewEncoder(w).Encode(value); err != nil {
		log.Printf("event=answer_failed error=%q", err)
	}
}

func main() {
	address := flag.String("address", "127.0.0.1:0", "host:port to listen on")
	flag.Parse()
	mux := http.NewServeMux()
	mux.HandleFunc("/filter", func(w http.ResponseWriter, r *http.Request) {
		if args, ok := readArgs(w, r); ok {
			reply(w, filterResult{NodeNames: args.NodeNames, FailedNodes: map[string]string{}})
		}
	})
	mux.HandleFunc("/prioritize", func(w http.ResponseWriter, r *http.Request) {
		if args, ok := readArgs(w, r); ok {
			scores := make([]hostPriority, len(*args.NodeNames))
			for i, name := range *args.NodeNames {
				scores[i] = hostPriority{Host: name}
			}
			reply(w, scores)
		}
	})
	log.Printf("event=listening address=%s", *address)
	log.Fatal(http.ListenAndServe(*address, mux))
}
