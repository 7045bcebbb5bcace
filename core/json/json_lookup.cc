#include "core/json/json_lookup.h"

namespace modelplane::core {

const nlohmann::json* FindMember(const nlohmann::json& object,
                                 std::initializer_list<std::string_view> path) {
  const nlohmann::json* node = &object;
  for (std::string_view key : path) {
    if (!node->is_object()) return nullptr;
    const auto found = node->find(key);
    if (found == node->end() || found->is_null()) return nullptr;
    node = &*found;
  }
  return node;
}

std::string StringMember(const nlohmann::json& object,
                         std::initializer_list<std::string_view> path) {
  const nlohmann::json* value = FindMember(object, path);
  return value != nullptr && value->is_string() ? value->get<std::string>() : std::string();
}

std::int64_t IntegerMember(const nlohmann::json& object,
                           std::initializer_list<std::string_view> path, std::int64_t fallback) {
  const nlohmann::json* value = FindMember(object, path);
  return value != nullptr && value->is_number_integer() ? value->get<std::int64_t>() : fallback;
}

bool BoolMember(const nlohmann::json& object, std::initializer_list<std::string_view> path) {
  const nlohmann::json* value = FindMember(object, path);
  return value != nullptr && value->is_boolean() && value->get<bool>();
}

std::map<std::string, std::string> StringMapMember(const nlohmann::json& object,
                                                   std::initializer_list<std::string_view> path) {
  std::map<std::string, std::string> out;
  const nlohmann::json* value = FindMember(object, path);
  if (value == nullptr || !value->is_object()) return out;
  for (const auto& [key, member] : value->items()) {
    if (member.is_string()) out.emplace(key, member.get<std::string>());
  }
  return out;
}

}  // namespace modelplane::core
