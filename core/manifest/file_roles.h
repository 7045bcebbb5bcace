// Which role a file of a model folder plays, decided by its name alone (the file is not opened).
//
// weights: *.safetensors (adapter_model.safetensors is an adapter); index: *.index.json;
// config: config.json, generation_config.json, preprocessor_config.json; tokenizer: tokenizer*,
// special_tokens_map.json, vocab.*, merges.txt, *.tiktoken, added_tokens.json, chat_template*;
// quantization: quantize_config.json, quant_config.json, hf_quant_config.json; adapter:
// adapter_config.json, adapter_model.*. Anything else (README.md, LICENSE, *.bin, *.pt...) has
// no role and is left out of the manifest.
// Thread safety: a pure function.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace modelplane::core {

// The role for the file at relative path `path`, or nullopt when it has none.
[[nodiscard]] std::optional<std::string> RoleForPath(std::string_view path);

}  // namespace modelplane::core
