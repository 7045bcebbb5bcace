#include "core/manifest/file_roles.h"

#include <array>

#include "core/api/model_revision.h"

namespace modelplane::core {

std::optional<std::string> RoleForPath(std::string_view path) {
  const std::size_t slash = path.rfind('/');
  const std::string_view name = slash == std::string_view::npos ? path : path.substr(slash + 1);
  if (name.empty() || name.front() == '.') return std::nullopt;

  if (name.starts_with("adapter_model.") || name == "adapter_config.json") {
    return std::string(api::kRoleAdapter);
  }
  if (name.ends_with(".index.json")) return std::string(api::kRoleIndex);
  if (name.ends_with(".safetensors")) return std::string(api::kRoleWeights);
  constexpr std::array kQuantization = {std::string_view("quantize_config.json"),
                                        std::string_view("quant_config.json"),
                                        std::string_view("hf_quant_config.json")};
  for (const std::string_view candidate : kQuantization) {
    if (name == candidate) return std::string(api::kRoleQuantization);
  }
  constexpr std::array kConfig = {std::string_view("config.json"),
                                  std::string_view("generation_config.json"),
                                  std::string_view("preprocessor_config.json")};
  for (const std::string_view candidate : kConfig) {
    if (name == candidate) return std::string(api::kRoleConfig);
  }
  if (name.starts_with("tokenizer") || name.starts_with("vocab.") ||
      name.starts_with("chat_template") || name.ends_with(".tiktoken") ||
      name == "special_tokens_map.json" || name == "merges.txt" || name == "added_tokens.json") {
    return std::string(api::kRoleTokenizer);
  }
  return std::nullopt;
}

}  // namespace modelplane::core
