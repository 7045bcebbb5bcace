// Reads the golden request bodies in tests/scheduler-extender/testdata.
#pragma once

#include <fstream>
#include <sstream>
#include <string>

namespace modelplane::extender::testing {

inline std::string ReadTestData(const std::string& name) {
  std::ifstream file(std::string(MODELPLANE_SOURCE_DIR) + "/tests/scheduler-extender/testdata/" +
                     name);
  std::ostringstream text;
  text << file.rdbuf();
  return text.str();
}

}  // namespace modelplane::extender::testing
