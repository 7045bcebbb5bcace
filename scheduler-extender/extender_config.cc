#include "scheduler-extender/extender_config.h"

namespace modelplane::extender {

void BindConfig(core::ConfigMap& map, ExtenderConfig& config) {
  map.Optional("admin", config.admin);
  map.Optional("log", config.log);
  map.Optional("kubernetes", config.kubernetes);
}

}  // namespace modelplane::extender
