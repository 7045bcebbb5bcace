#include "core/safetensors/safetensors_header.h"

#include <algorithm>
#include <cerrno>
#include <system_error>
#include <utility>

#include <fcntl.h>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/io/unique_fd.h"
#include "core/safetensors/header_json.h"
#include "core/text/utf8.h"

namespace modelplane::core {

// Fills the private index of a SafetensorsHeader; the only code that can.
class SafetensorsHeaderBuilder {
 public:
  static void BuildIndex(SafetensorsHeader& header) {
    header.index_.reserve(header.tensors.size());
    for (std::size_t i = 0; i < header.tensors.size(); ++i) {
      header.index_.emplace(header.tensors[i].name, i);
    }
  }
};

namespace {

std::unexpected<Error> Invalid(std::string message) {
  return MakeError(ErrorCode::kInvalidArgument,
                   fmt::format("safetensors header: {}", std::move(message)));
}

std::string ShapeText(const std::vector<std::uint64_t>& shape) {
  return fmt::format("[{}]", fmt::join(shape, ", "));
}

// Bytes a tensor of this dtype and shape occupies; overflow and fractional bytes are errors.
Result<std::uint64_t> TensorByteSize(const RawTensorEntry& entry) {
  std::uint64_t bits = DtypeBits(entry.dtype);
  for (std::uint64_t dim : entry.shape) {
    if (dim != 0 && bits > UINT64_MAX / dim) {
      return Invalid(fmt::format("tensor {}: shape {} of {} overflows 64 bits",
                                 QuoteName(entry.name), ShapeText(entry.shape),
                                 DtypeName(entry.dtype)));
    }
    bits *= dim;
  }
  if (bits % 8 != 0) {
    return Invalid(fmt::format("tensor {}: shape {} of {} is not a whole number of bytes",
                               QuoteName(entry.name), ShapeText(entry.shape),
                               DtypeName(entry.dtype)));
  }
  return bits / 8;
}

// Checks each tensor's range against its shape, then that the ranges tile the data section.
Status CheckLayout(std::vector<RawTensorEntry>& tensors, std::uint64_t data_size) {
  for (const RawTensorEntry& entry : tensors) {
    if (entry.end < entry.begin) {
      return Invalid(fmt::format("tensor {}: data_offsets [{}, {}] end before they begin",
                                 QuoteName(entry.name), entry.begin, entry.end));
    }
    auto bytes = TensorByteSize(entry);
    if (!bytes) return std::unexpected(bytes.error());
    if (entry.end - entry.begin != *bytes) {
      return Invalid(
          fmt::format("tensor {}: data_offsets [{}, {}] hold {} bytes but shape {} of {} needs {}",
                      QuoteName(entry.name), entry.begin, entry.end, entry.end - entry.begin,
                      ShapeText(entry.shape), DtypeName(entry.dtype), *bytes));
    }
    if (entry.end > data_size) {
      return Invalid(
          fmt::format("tensor {}: data_offsets [{}, {}] run past the data section of {} bytes",
                      QuoteName(entry.name), entry.begin, entry.end, data_size));
    }
  }
  std::sort(tensors.begin(), tensors.end(), [](const RawTensorEntry& a, const RawTensorEntry& b) {
    return std::tie(a.begin, a.end, a.name) < std::tie(b.begin, b.end, b.name);
  });
  std::uint64_t expected = 0;
  const RawTensorEntry* previous = nullptr;
  for (const RawTensorEntry& entry : tensors) {
    if (entry.begin < expected) {
      return Invalid(fmt::format("tensor {} at [{}, {}] overlaps tensor {} at [{}, {}]",
                                 QuoteName(entry.name), entry.begin, entry.end,
                                 QuoteName(previous->name), previous->begin, previous->end));
    }
    if (entry.begin > expected) {
      return Invalid(
          fmt::format("{} bytes of the data section before tensor {} at offset {} "
                      "belong to no tensor",
                      entry.begin - expected, QuoteName(entry.name), entry.begin));
    }
    expected = entry.end;
    previous = &entry;
  }
  if (expected != data_size) {
    return Invalid(fmt::format(
        "tensors cover {} bytes but the data section holds {} (file truncated or padded)", expected,
        data_size));
  }
  return Ok();
}

Status ReadExactly(int fd, std::span<std::byte> out, std::uint64_t offset,
                   const std::string& path) {
  std::size_t done = 0;
  while (done < out.size()) {
    const ssize_t n =
        ::pread(fd, out.data() + done, out.size() - done, static_cast<off_t>(offset + done));
    if (n < 0) {
      if (errno == EINTR) continue;
      return MakeError(ErrorCode::kIo,
                       fmt::format("reading {}: {}", path, std::system_category().message(errno)));
    }
    if (n == 0) {
      return MakeError(ErrorCode::kDataLoss,
                       fmt::format("reading {}: file shrank while reading its header", path));
    }
    done += static_cast<std::size_t>(n);
  }
  return Ok();
}

}  // namespace

const TensorInfo* SafetensorsHeader::Find(std::string_view name) const {
  const auto it = index_.find(std::string(name));
  return it == index_.end() ? nullptr : &tensors[it->second];
}

Result<std::uint64_t> ParseSafetensorsHeaderLength(std::span<const std::byte> prefix,
                                                   std::uint64_t file_size,
                                                   const SafetensorsLimits& limits) {
  if (file_size < kSafetensorsLengthPrefixBytes) {
    return MakeError(ErrorCode::kDataLoss,
                     fmt::format("safetensors header: file of {} bytes is shorter than the "
                                 "8-byte header length",
                                 file_size));
  }
  if (prefix.size() < kSafetensorsLengthPrefixBytes) {
    return MakeError(
        ErrorCode::kInvalidArgument,
        fmt::format("safetensors header: {} bytes given, the length needs 8", prefix.size()));
  }
  std::uint64_t length = 0;
  for (std::size_t i = 0; i < kSafetensorsLengthPrefixBytes; ++i) {
    length |= static_cast<std::uint64_t>(prefix[i]) << (8 * i);
  }
  if (length > limits.max_header_bytes) {
    return Invalid(
        fmt::format("length {} exceeds the limit of {} bytes", length, limits.max_header_bytes));
  }
  if (length > file_size - kSafetensorsLengthPrefixBytes) {
    return MakeError(ErrorCode::kDataLoss,
                     fmt::format("safetensors header: length {} runs past the end of the "
                                 "{}-byte file",
                                 length, file_size));
  }
  if (length < 2) return Invalid(fmt::format("length {} cannot hold a JSON object", length));
  return length;
}

Result<SafetensorsHeader> ParseSafetensorsHeader(std::span<const std::byte> file_prefix,
                                                 std::uint64_t file_size,
                                                 const SafetensorsLimits& limits) {
  auto length = ParseSafetensorsHeaderLength(file_prefix, file_size, limits);
  if (!length) return std::unexpected(length.error());
  if (file_prefix.size() - kSafetensorsLengthPrefixBytes < *length) {
    return MakeError(ErrorCode::kInvalidArgument,
                     fmt::format("safetensors header: {} bytes given, the header needs {}",
                                 file_prefix.size(), kSafetensorsLengthPrefixBytes + *length));
  }
  const std::string_view json(
      reinterpret_cast<const char*>(file_prefix.data()) + kSafetensorsLengthPrefixBytes,
      static_cast<std::size_t>(*length));
  if (const auto bad = FindInvalidUtf8(json)) {
    return Invalid(fmt::format("invalid UTF-8 at header byte {}", *bad));
  }
  if (json.front() != '{') return Invalid("the header must start with '{'");
  // nlohmann's lexer takes a NUL byte for the end of input, which would hide whatever follows;
  // valid JSON never holds a raw NUL (inside strings it must be escaped).
  if (const auto nul = json.find('\0'); nul != std::string_view::npos) {
    return Invalid(fmt::format("NUL byte at header byte {}", nul));
  }

  auto raw = ParseHeaderJson(json, limits);
  if (!raw) return std::unexpected(raw.error());

  SafetensorsHeader header;
  header.header_bytes = *length;
  header.data_start = kSafetensorsLengthPrefixBytes + *length;
  header.file_size = file_size;
  if (auto status = CheckLayout(raw->tensors, file_size - header.data_start); !status) {
    return std::unexpected(status.error());
  }
  header.tensors.reserve(raw->tensors.size());
  for (RawTensorEntry& entry : raw->tensors) {
    header.tensors.push_back(TensorInfo{std::move(entry.name), entry.dtype, std::move(entry.shape),
                                        header.data_start + entry.begin,
                                        header.data_start + entry.end});
  }
  header.metadata = std::move(raw->metadata);
  SafetensorsHeaderBuilder::BuildIndex(header);
  return header;
}

Result<SafetensorsHeader> ReadSafetensorsHeader(const std::string& path,
                                                const SafetensorsLimits& limits) {
  const UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (fd.get() < 0) {
    const int error = errno;
    return MakeError(error == ENOENT ? ErrorCode::kNotFound : ErrorCode::kIo,
                     fmt::format("opening {}: {}", path, std::system_category().message(error)));
  }
  struct stat info {};
  if (::fstat(fd.get(), &info) != 0) {
    return MakeError(ErrorCode::kIo,
                     fmt::format("stat {}: {}", path, std::system_category().message(errno)));
  }
  if (!S_ISREG(info.st_mode)) {
    return MakeError(ErrorCode::kInvalidArgument, fmt::format("{} is not a regular file", path));
  }
  const auto file_size = static_cast<std::uint64_t>(info.st_size);
  std::vector<std::byte> buffer(std::min<std::uint64_t>(file_size, kSafetensorsLengthPrefixBytes));
  if (auto status = ReadExactly(fd.get(), buffer, 0, path); !status) {
    return std::unexpected(status.error());
  }
  auto length = ParseSafetensorsHeaderLength(buffer, file_size, limits);
  if (!length) return std::unexpected(length.error().Wrap(path));
  // Bounded by max_header_bytes and by the file size, both checked above.
  buffer.resize(static_cast<std::size_t>(kSafetensorsLengthPrefixBytes + *length));
  if (auto status = ReadExactly(fd.get(), std::span(buffer).subspan(kSafetensorsLengthPrefixBytes),
                                kSafetensorsLengthPrefixBytes, path);
      !status) {
    return std::unexpected(status.error());
  }
  auto header = ParseSafetensorsHeader(buffer, file_size, limits);
  if (!header) return std::unexpected(header.error().Wrap(path));
  return header;
}

}  // namespace modelplane::core
