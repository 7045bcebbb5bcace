#include "core/safetensors/safetensors_header.h"

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <fcntl.h>
#include <unistd.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/text/utf8.h"

namespace modelplane::core {
namespace {

using ::testing::HasSubstr;

std::vector<std::byte> LengthPrefix(std::uint64_t length) {
  std::vector<std::byte> out;
  out.reserve(8);
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<std::byte>((length >> (8 * i)) & 0xff));
  return out;
}

// A whole file: length prefix, header text, then data_bytes zero bytes.
std::vector<std::byte> MakeFile(const std::string& header, std::size_t data_bytes) {
  std::vector<std::byte> file = LengthPrefix(header.size());
  for (char c : header) file.push_back(static_cast<std::byte>(c));
  file.resize(file.size() + data_bytes);
  return file;
}

Result<SafetensorsHeader> Parse(const std::string& header, std::size_t data_bytes,
                                const SafetensorsLimits& limits = {}) {
  const std::vector<std::byte> file = MakeFile(header, data_bytes);
  return ParseSafetensorsHeader(file, file.size(), limits);
}

std::string ErrorOf(const std::string& header, std::size_t data_bytes,
                    const SafetensorsLimits& limits = {}) {
  auto parsed = Parse(header, data_bytes, limits);
  return parsed ? std::string("<parsed>") : parsed.error().message();
}

// NOLINTNEXTLINE(cert-err58-cpp): a test constant; a throw before main ends the test anyway
const std::string kTwoTensors =
    R"({"__metadata__": {"format": "pt"},
        "b": {"dtype": "BF16", "shape": [2, 3], "data_offsets": [16, 28]},
        "a": {"dtype": "F32", "shape": [4], "data_offsets": [0, 16]}})";

TEST(SafetensorsHeaderTest, ParsesAValidHeader) {
  auto header = Parse(kTwoTensors, 28);
  ASSERT_TRUE(header.has_value()) << header.error().message();
  EXPECT_EQ(header->header_bytes, kTwoTensors.size());
  EXPECT_EQ(header->data_start, 8 + kTwoTensors.size());
  ASSERT_EQ(header->tensors.size(), 2u);
  EXPECT_EQ(header->tensors[0].name, "a");  // file order
  EXPECT_EQ(header->tensors[0].data_begin, header->data_start);
  EXPECT_EQ(header->tensors[0].ByteSize(), 16u);
  const TensorInfo* b = header->Find("b");
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(b->dtype, Dtype::kBF16);
  EXPECT_EQ(b->shape, (std::vector<std::uint64_t>{2, 3}));
  EXPECT_EQ(b->data_begin, header->data_start + 16);
  EXPECT_EQ(b->data_end, header->data_start + 28);
  EXPECT_EQ(header->Find("c"), nullptr);
  EXPECT_EQ(header->metadata.at("format"), "pt");
}

TEST(SafetensorsHeaderTest, AcceptsEdgeCasesTheFormatAllows) {
  EXPECT_TRUE(Parse("{}", 0).has_value());
  EXPECT_TRUE(Parse(R"({"a": {"dtype": "F16", "shape": [], "data_offsets": [0, 2]}}   )", 2)
                  .has_value());  // scalar, space padding
  EXPECT_TRUE(Parse(R"({"a": {"dtype": "F16", "shape": [0, 5], "data_offsets": [0, 0]},
                        "b": {"dtype": "U8", "shape": [1], "data_offsets": [0, 1]}})",
                    1)
                  .has_value());  // empty tensor
  EXPECT_TRUE(
      Parse(R"({"a": {"dtype": "F4", "shape": [2], "data_offsets": [0, 1]}})", 1).has_value());
  EXPECT_TRUE(
      Parse(R"({"a": {"dtype": "F6_E2M3", "shape": [4], "data_offsets": [0, 3]}})", 3).has_value());
}

TEST(SafetensorsHeaderTest, RejectsFilesShorterThanTheLengthPrefix) {
  const std::vector<std::byte> tiny(5);
  auto header = ParseSafetensorsHeader(tiny, tiny.size());
  ASSERT_FALSE(header.has_value());
  EXPECT_EQ(header.error().code(), ErrorCode::kDataLoss);
  EXPECT_THAT(header.error().message(), HasSubstr("shorter than the 8-byte header length"));
}

TEST(SafetensorsHeaderTest, RejectsHeaderLengthBeyondTheFile) {
  std::vector<std::byte> file = MakeFile("{}", 0);
  file[0] = std::byte{200};
  auto header = ParseSafetensorsHeader(file, file.size());
  ASSERT_FALSE(header.has_value());
  EXPECT_EQ(header.error().code(), ErrorCode::kDataLoss);
  EXPECT_THAT(header.error().message(), HasSubstr("length 200 runs past the end"));

  file = LengthPrefix(UINT64_MAX);
  header = ParseSafetensorsHeader(file, UINT64_MAX);
  ASSERT_FALSE(header.has_value());
  EXPECT_THAT(header.error().message(), HasSubstr("exceeds the limit of 100000000 bytes"));

  file = LengthPrefix(UINT64_MAX - 3);  // would wrap if added to 8 carelessly
  header = ParseSafetensorsHeader(file, 1000, {.max_header_bytes = UINT64_MAX});
  ASSERT_FALSE(header.has_value());
  EXPECT_THAT(header.error().message(), HasSubstr("runs past the end"));
}

TEST(SafetensorsHeaderTest, RejectsBufferShorterThanTheHeader) {
  std::vector<std::byte> file = MakeFile(kTwoTensors, 28);
  auto header = ParseSafetensorsHeader(std::span(file).first(20), file.size());
  ASSERT_FALSE(header.has_value());
  EXPECT_THAT(header.error().message(), HasSubstr("20 bytes given"));
}

TEST(SafetensorsHeaderTest, RejectsOverlapsHolesAndOutOfRangeOffsets) {
  EXPECT_THAT(ErrorOf(R"({"a": {"dtype": "U8", "shape": [4], "data_offsets": [0, 4]},
                          "b": {"dtype": "U8", "shape": [4], "data_offsets": [2, 6]}})",
                      6),
              HasSubstr(R"(tensor "b" at [2, 6] overlaps tensor "a" at [0, 4])"));
  EXPECT_THAT(ErrorOf(R"({"a": {"dtype": "U8", "shape": [4], "data_offsets": [0, 4]},
                          "b": {"dtype": "U8", "shape": [4], "data_offsets": [6, 10]}})",
                      10),
              HasSubstr(R"(2 bytes of the data section before tensor "b" at offset 6)"));
  EXPECT_THAT(ErrorOf(R"({"a": {"dtype": "U8", "shape": [4], "data_offsets": [2, 6]}})", 6),
              HasSubstr("before tensor \"a\""));
  EXPECT_THAT(ErrorOf(R"({"a": {"dtype": "U8", "shape": [4], "data_offsets": [0, 4]}})", 3),
              HasSubstr("run past the data section of 3 bytes"));
  EXPECT_THAT(ErrorOf(R"({"a": {"dtype": "U8", "shape": [4], "data_offsets": [0, 4]}})", 9),
              HasSubstr("tensors cover 4 bytes but the data section holds 9"));
  EXPECT_THAT(ErrorOf(R"({"a": {"dtype": "U8", "shape": [0], "data_offsets": [4, 0]}})", 4),
              HasSubstr("end before they begin"));
  EXPECT_THAT(
      ErrorOf(R"({"a": {"dtype": "U8", "shape": [1], "data_offsets": [18446744073709551615, 0]}})",
              1),
      HasSubstr("end before they begin"));
}

TEST(SafetensorsHeaderTest, RejectsSizeMismatchAndShapeOverflow) {
  EXPECT_THAT(ErrorOf(R"({"a": {"dtype": "F32", "shape": [2, 2], "data_offsets": [0, 8]}})", 8),
              HasSubstr("hold 8 bytes but shape [2, 2] of F32 needs 16"));
  EXPECT_THAT(ErrorOf(R"({"a": {"dtype": "F32", "shape": [4294967296, 4294967296],
                          "data_offsets": [0, 0]}})",
                      0),
              HasSubstr("shape [4294967296, 4294967296] of F32 overflows 64 bits"));
  // The element count fits in 64 bits; times the dtype size it does not.
  EXPECT_THAT(ErrorOf(R"({"a": {"dtype": "F64", "shape": [4611686018427387904],
                          "data_offsets": [0, 0]}})",
                      0),
              HasSubstr("overflows 64 bits"));
  EXPECT_THAT(ErrorOf(R"({"a": {"dtype": "F4", "shape": [3], "data_offsets": [0, 2]}})", 2),
              HasSubstr("not a whole number of bytes"));
  EXPECT_THAT(ErrorOf(R"({"a": {"dtype": "U8", "shape": [1, 2, 3], "data_offsets": [0, 6]}})", 6,
                      {.max_rank = 2}),
              HasSubstr("shape has more than 2 dimensions"));
}

TEST(SafetensorsHeaderTest, RejectsWrongDtypes) {
  EXPECT_THAT(ErrorOf(R"({"a": {"dtype": "F128", "shape": [1], "data_offsets": [0, 16]}})", 16),
              HasSubstr(R"(tensor "a": unknown dtype "F128")"));
  EXPECT_THAT(ErrorOf(R"({"a": {"dtype": "bf16", "shape": [1], "data_offsets": [0, 2]}})", 2),
              HasSubstr("unknown dtype"));
  EXPECT_THAT(ErrorOf(R"({"a": {"dtype": 4, "shape": [1], "data_offsets": [0, 4]}})", 4),
              HasSubstr(R"(tensor "a": dtype must be a string, not a number)"));
}

TEST(SafetensorsHeaderTest, RejectsMalformedEntries) {
  EXPECT_THAT(ErrorOf(R"({"a": {"dtype": "U8", "shape": [1], "data_offsets": [0, -1]}})", 1),
              HasSubstr("data_offsets values must be non-negative integers"));
  EXPECT_THAT(ErrorOf(R"({"a": {"dtype": "U8", "shape": [1.0], "data_offsets": [0, 1]}})", 1),
              HasSubstr("shape values must be non-negative integers"));
  EXPECT_THAT(ErrorOf(R"({"a": {"dtype": "U8", "shape": [1], "data_offsets": [0, 1, 2]}})", 1),
              HasSubstr("exactly two integers"));
  EXPECT_THAT(ErrorOf(R"({"a": {"dtype": "U8", "shape": [1], "data_offsets": [0]}})", 1),
              HasSubstr("exactly two integers"));
  EXPECT_THAT(ErrorOf(R"({"a": {"dtype": "U8", "shape": [1]}})", 1),
              HasSubstr("needs dtype, shape and data_offsets"));
  EXPECT_THAT(
      ErrorOf(R"({"a": {"dtype": "U8", "shape": [1], "data_offsets": [0, 1], "extra": 1}})", 1),
      HasSubstr(R"(unknown field "extra")"));
  EXPECT_THAT(ErrorOf(R"({"a": [1, 2]})", 0), HasSubstr(R"(tensor "a" must be an object)"));
  EXPECT_THAT(ErrorOf(R"({"a": {"dtype": "U8", "shape": "1", "data_offsets": [0, 1]}})", 1),
              HasSubstr("shape must be an array of integers"));
  EXPECT_THAT(ErrorOf(R"([1])", 0), HasSubstr("must start with '{'"));
  EXPECT_THAT(ErrorOf(R"( {})", 0), HasSubstr("must start with '{'"));
  EXPECT_THAT(ErrorOf(R"({} {})", 0), HasSubstr("invalid JSON"));
  EXPECT_THAT(ErrorOf(R"({"a": {"dtype": "U8", "sh)", 0), HasSubstr("invalid JSON"));
  EXPECT_THAT(ErrorOf(std::string("{}\0\0", 4), 0), HasSubstr("NUL byte at header byte 2"));
  EXPECT_THAT(ErrorOf(std::string("{}\0{\"hidden\": 1}", 15), 0), HasSubstr("NUL byte"));
  EXPECT_THAT(ErrorOf("", 0), HasSubstr("cannot hold a JSON object"));
}

TEST(SafetensorsHeaderTest, RejectsNonStringMetadata) {
  EXPECT_THAT(ErrorOf(R"({"__metadata__": {"epoch": 3}})", 0),
              HasSubstr(R"(__metadata__["epoch"] must be a string, not a number)"));
  EXPECT_THAT(ErrorOf(R"({"__metadata__": {"nested": {"a": "b"}}})", 0),
              HasSubstr(R"(__metadata__["nested"] must be a string, not an object)"));
  EXPECT_THAT(ErrorOf(R"({"__metadata__": ["a"]})", 0),
              HasSubstr("__metadata__ must be an object of strings, not an array"));
  EXPECT_THAT(ErrorOf(R"({"__metadata__": null})", 0),
              HasSubstr("__metadata__ must be an object of strings, not null"));
}

TEST(SafetensorsHeaderTest, RejectsDeepNestingQuickly) {
  const std::string deep = "{\"a\": " + std::string(1000000, '[') + std::string(1000000, ']') + "}";
  const auto start = std::chrono::steady_clock::now();
  EXPECT_THAT(ErrorOf(deep, 0), HasSubstr(R"(tensor "a" must be an object, not an array)"));
  const std::string deep_objects = "{\"a\": {\"shape\": " + std::string(1000, '{') + "}";
  EXPECT_THAT(ErrorOf(deep_objects, 0), HasSubstr("shape must be an array of integers"));
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(2));
}

TEST(SafetensorsHeaderTest, RejectsInvalidUtf8) {
  EXPECT_THAT(ErrorOf("{\"\xff\": {}}", 0), HasSubstr("invalid UTF-8 at header byte 2"));
  EXPECT_THAT(ErrorOf("{\"\xc0\x80\": {}}", 0), HasSubstr("invalid UTF-8"));      // overlong NUL
  EXPECT_THAT(ErrorOf("{\"\xed\xa0\x80\": {}}", 0), HasSubstr("invalid UTF-8"));  // surrogate
  EXPECT_THAT(ErrorOf("{\"\xf4\x90\x80\x80\": {}}", 0), HasSubstr("invalid UTF-8"));
  EXPECT_THAT(ErrorOf("{\"\xe2\x82\": {}}", 0), HasSubstr("invalid UTF-8"));  // truncated
  EXPECT_FALSE(FindInvalidUtf8("plain ascii, caf\xc3\xa9, \xe2\x82\xac, \xf0\x9f\x98\x80"));
}

TEST(SafetensorsHeaderTest, RejectsDuplicateNames) {
  EXPECT_THAT(ErrorOf(R"({"a": {"dtype": "U8", "shape": [1], "data_offsets": [0, 1]},
                          "a": {"dtype": "U8", "shape": [1], "data_offsets": [1, 2]}})",
                      2),
              HasSubstr(R"(duplicate key "a")"));
  EXPECT_THAT(ErrorOf(R"({"__metadata__": {}, "__metadata__": {}})", 0),
              HasSubstr(R"(duplicate key "__metadata__")"));
  EXPECT_THAT(ErrorOf(R"({"__metadata__": {"k": "1", "k": "2"}})", 0),
              HasSubstr(R"(__metadata__: duplicate key "k")"));
  EXPECT_THAT(ErrorOf(R"({"a": {"dtype": "U8", "dtype": "U8", "shape": [1],
                          "data_offsets": [0, 1]}})",
                      1),
              HasSubstr(R"(tensor "a": duplicate field "dtype")"));
}

TEST(SafetensorsHeaderTest, BoundsTheNumberOfTensors) {
  std::string header = "{";
  for (int i = 0; i < 3; ++i) {
    if (i > 0) header += ",";
    header += "\"t" + std::to_string(i) + R"(": {"dtype": "U8", "shape": [1], "data_offsets": [)" +
              std::to_string(i) + ", " + std::to_string(i + 1) + "]}";
  }
  header += "}";
  EXPECT_TRUE(Parse(header, 3, {.max_tensors = 3}).has_value());
  EXPECT_THAT(ErrorOf(header, 3, {.max_tensors = 2}), HasSubstr("more than 2 tensors"));
}

TEST(SafetensorsHeaderTest, EscapesHostileNamesInMessages) {
  EXPECT_THAT(ErrorOf("{\"a\\n\\u0000b\": 1}", 0), HasSubstr(R"(tensor "a\n\u0000b" must be)"));
}

class SafetensorsFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = (std::filesystem::temp_directory_path() /
             ("safetensors_test_" + std::to_string(::getpid()) + "_" +
              ::testing::UnitTest::GetInstance()->current_test_info()->name()))
                .string();
  }
  void TearDown() override { std::filesystem::remove(path_); }

  void Write(const std::vector<std::byte>& bytes, std::uint64_t total_size) {
    std::ofstream out(path_, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(bytes.data()),
              static_cast<std::streamsize>(bytes.size()));
    out.close();
    std::filesystem::resize_file(path_, total_size);
  }

  std::string path_;
};

TEST_F(SafetensorsFileTest, ReadsOnlyTheHeaderOfALargeFile) {
  // A 64 GiB sparse file: parsing must not read (or map) the data section.
  const std::uint64_t data = std::uint64_t{64} << 30;
  const std::string header =
      R"({"w": {"dtype": "BF16", "shape": [34359738368], "data_offsets": [0, )" +
      std::to_string(data) + "]}}";
  const std::vector<std::byte> prefix = MakeFile(header, 0);
  Write(prefix, prefix.size() + data);
  auto parsed = ReadSafetensorsHeader(path_);
  ASSERT_TRUE(parsed.has_value()) << parsed.error().message();
  EXPECT_EQ(parsed->file_size, prefix.size() + data);
  EXPECT_EQ(parsed->Find("w")->ByteSize(), data);
}

TEST_F(SafetensorsFileTest, ReportsTruncatedAndMissingFiles) {
  Write(LengthPrefix(1000), 100);
  auto parsed = ReadSafetensorsHeader(path_);
  ASSERT_FALSE(parsed.has_value());
  EXPECT_EQ(parsed.error().code(), ErrorCode::kDataLoss);
  EXPECT_THAT(parsed.error().message(), HasSubstr(path_ + ": safetensors header: length 1000"));

  Write({}, 3);
  parsed = ReadSafetensorsHeader(path_);
  ASSERT_FALSE(parsed.has_value());
  EXPECT_THAT(parsed.error().message(), HasSubstr("file of 3 bytes"));

  parsed = ReadSafetensorsHeader(path_ + ".missing");
  ASSERT_FALSE(parsed.has_value());
  EXPECT_EQ(parsed.error().code(), ErrorCode::kNotFound);
  parsed = ReadSafetensorsHeader(std::filesystem::temp_directory_path().string());
  ASSERT_FALSE(parsed.has_value());
}

}  // namespace
}  // namespace modelplane::core
