// Where a source's credentialsSecretRef is resolved (an object store's keys, a hub's token): the
// node agent asks the operator (operator_credentials.h), which hands a node only the Secrets of
// revisions that node holds; the command-line tools read Secrets the person running them put in a
// folder. Thread safety: Read may be called from many threads at once.
#pragma once

#include <memory>
#include <string>

#include "core/error/error.h"
#include "node-agent/sources/s3_credentials.h"
#include "node-agent/sources/sigv4_signer.h"

namespace modelplane::agent {

class CredentialSecrets {
 public:
  virtual ~CredentialSecrets() = default;
  // The keys of Secret `namespace_name`/`name`. `fresh`: the store refused the last ones (a
  // rotated Secret), so they are not to be answered from memory.
  [[nodiscard]] virtual core::Result<SigningCredentials> Read(const std::string& namespace_name,
                                                              const std::string& name,
                                                              bool fresh) = 0;
  // The hub token of the same Secret (key token, HF_TOKEN or MODELSCOPE_API_TOKEN); kNotFound
  // when it has none.
  [[nodiscard]] virtual core::Result<std::string> ReadToken(const std::string& namespace_name,
                                                            const std::string& name,
                                                            bool fresh) = 0;
};

// "<directory>/<name>/" (s3_credentials.h); the namespace is not part of the path: whoever runs
// the command chose the folder.
class DirectorySecrets final : public CredentialSecrets {
 public:
  explicit DirectorySecrets(std::string directory) : directory_(std::move(directory)) {}
  [[nodiscard]] core::Result<SigningCredentials> Read(const std::string& /*namespace_name*/,
                                                      const std::string& name,
                                                      bool /*fresh*/) override {
    return CredentialsFromDirectory(directory_ + "/" + name);
  }
  [[nodiscard]] core::Result<std::string> ReadToken(const std::string& /*namespace_name*/,
                                                    const std::string& name,
                                                    bool /*fresh*/) override {
    return TokenFromDirectory(directory_ + "/" + name);
  }

 private:
  const std::string directory_;
};

}  // namespace modelplane::agent
