#include "core/metrics/counter.h"

#include "core/metrics/text_format.h"

namespace modelplane::core {

void CounterCell::AppendSamples(std::string& out, std::string_view family_name,
                                std::string_view labels) const {
  AppendSampleLine(out, family_name, labels, Value());
}

}  // namespace modelplane::core
