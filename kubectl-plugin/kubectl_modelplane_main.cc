// kubectl-modelplane: the `kubectl modelplane` plugin (kubectl runs any kubectl-* on PATH).
#include <filesystem>
#include <iostream>

#include "core/clock/clock.h"
#include "kubectl-plugin/plugin_app.h"

int main(int argc, char** argv) {
  modelplane::core::SystemClock clock;
  const std::vector<std::string> arguments(argv + 1, argv + argc);
  return modelplane::cli::RunPlugin(arguments, {.getenv = modelplane::core::ProcessEnvironment,
                                                .file_exists =
                                                    [](const std::string& path) {
                                                      std::error_code error;
                                                      return std::filesystem::is_regular_file(
                                                          path, error);
                                                    },
                                                .clock = clock,
                                                .out = std::cout,
                                                .err = std::cerr});
}
