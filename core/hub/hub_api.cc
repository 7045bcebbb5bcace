#include "core/hub/hub_api.h"

#include <fmt/format.h>

#include "core/api/model_revision.h"
#include "core/hub/hub_transport.h"
#include "core/hub/hugging_face_api.h"
#include "core/hub/model_scope_api.h"

namespace modelplane::core {

Result<std::unique_ptr<HubApi>> CreateHubApi(std::string_view source_type, HubClientOptions options,
                                             const Clock& clock) {
  const bool model_scope = source_type == api::kSourceModelScope;
  if (!model_scope && source_type != api::kSourceHuggingFace) {
    return MakeError(ErrorCode::kInvalidArgument,
                     fmt::format("{} is not a hub source type", source_type));
  }
  auto transport = HubTransport::Create(
      std::move(options), model_scope ? HubDialect::kModelScope : HubDialect::kHuggingFace, clock);
  if (!transport) return std::unexpected(transport.error());
  if (model_scope) return std::make_unique<ModelScopeApi>(std::move(*transport));
  return std::make_unique<HuggingFaceApi>(std::move(*transport));
}

}  // namespace modelplane::core
