// safetensors: round trips of every dtype (0-d and empty tensors too), the header's layout, a file
// written byte by byte from the format's description, and corrupt files rejected by name.
#include <gtest/gtest.h>

#include <bit>
#include <cstring>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "runtime/core/error.h"
#include "runtime/train/safetensors.h"
#include "runtime/train/safetensors_checksums.h"
#include "tests/runtime/train/file_test_support.h"
#include "tests/support/test_support.h"

namespace baton {
namespace {

using testing::little_endian;
using testing::safetensors_bytes;

Tensor random_of(const Shape& shape, DType dtype, const Stream& stream, uint64_t seed) {
  return dtype == DType::u8 ? testing::random_tensor(shape, dtype, stream, seed, 0, 250)
                            : testing::random_tensor(shape, dtype, stream, seed, -1000, 1000);
}

TEST(Safetensors, RoundTripsEveryDTypeIncludingScalarsAndEmptyTensors) {
  testing::ScratchDir dir("st_roundtrip");
  const Stream stream = Stream::create(Device::cpu());
  NamedTensors tensors;
  uint64_t seed = 1;
  for (DType dtype : kAllDTypes) {
    for (const Shape& shape : {Shape{2, 3}, Shape{}, Shape{0}, Shape{3, 0, 2}, Shape{5}}) {
      tensors.emplace_back(std::string(dtype_name(dtype)) + "." + std::to_string(seed),
                           random_of(shape, dtype, stream, seed));
      ++seed;
    }
  }
  const std::map<std::string, std::string> metadata{{"step", "12"}, {"note", "caf\xc3\xa9"}};
  const std::string path = dir.file("all.safetensors");
  save_safetensors(path, tensors, metadata, stream);

  const SafetensorsFile file(path);
  EXPECT_EQ(file.metadata(), metadata);
  ASSERT_EQ(file.names().size(), tensors.size());
  for (size_t i = 0; i < tensors.size(); ++i) {
    const auto& [name, tensor] = tensors[i];
    EXPECT_EQ(file.names()[i], name);  // data in the order given
    EXPECT_EQ(file.info(name).dtype, tensor.dtype()) << name;
    EXPECT_EQ(file.info(name).shape, tensor.shape()) << name;
    // Into a destination one element off alignment: reads copy, they assume nothing.
    const Tensor back = testing::poisoned(tensor.shape(), tensor.dtype(), stream, /*offset=*/true);
    file.read_into(name, back, stream);
    EXPECT_EQ(testing::bytes_of(back, stream), testing::bytes_of(tensor, stream)) << name;
    EXPECT_EQ(testing::bytes_of(file.read(name, stream), stream), testing::bytes_of(tensor, stream)) << name;
  }
}

TEST(Safetensors, HeaderIsJsonPaddedSoTheDataStartsEightByteAligned) {
  testing::ScratchDir dir("st_header");
  const Stream stream = Stream::create(Device::cpu());
  // Sizes chosen so the unpadded header length is not a multiple of 8 for some name lengths.
  for (const std::string name : {"a", "ab", "abc", "abcd", "abcde", "abcdef", "abcdefg", "abcdefgh"}) {
    const Tensor t = random_of(Shape{3}, DType::f16, stream, 3);
    const Tensor u = random_of(Shape{2, 2}, DType::f64, stream, 4);
    const std::string path = dir.file(name + ".safetensors");
    save_safetensors(path, {{name, t}, {"second", u}}, {{"k", name}}, stream);
    const std::string bytes = testing::read_file(path);
    ASSERT_GE(bytes.size(), 8u);
    uint64_t n = 0;
    for (int i = 7; i >= 0; --i) n = (n << 8) | static_cast<unsigned char>(bytes[static_cast<size_t>(i)]);
    EXPECT_EQ((8 + n) % 8, 0u) << name;
    ASSERT_LE(8 + n, bytes.size());
    nlohmann::json header = nlohmann::json::parse(bytes.substr(8, n));  // trailing spaces are JSON whitespace
    // The checksums baton adds to every file it writes (safetensors_checksums.h), beside the given metadata.
    EXPECT_EQ(header["__metadata__"].erase(std::string(kTensorChecksumsKey)), 1u);
    EXPECT_EQ(header["__metadata__"].erase(std::string(kHeaderChecksumKey)), 1u);
    EXPECT_EQ(header["__metadata__"], nlohmann::json({{"k", name}}));
    EXPECT_EQ(header[name]["dtype"], "F16");
    EXPECT_EQ(header[name]["shape"], nlohmann::json({3}));
    EXPECT_EQ(header[name]["data_offsets"], nlohmann::json({0, 6}));
    EXPECT_EQ(header["second"]["dtype"], "F64");
    EXPECT_EQ(header["second"]["data_offsets"], nlohmann::json({6, 38}));
    EXPECT_EQ(bytes.size(), 8 + n + 38);
    EXPECT_EQ(bytes.substr(8 + n, 6),
              std::string(reinterpret_cast<const char*>(testing::bytes_of(t, stream).data()), 6));
  }
}

TEST(Safetensors, ReadsAFileWrittenByHandFromTheSpecification) {
  testing::ScratchDir dir("st_by_hand");
  // Keys out of data order, no padding (the data starts unaligned), an empty tensor, metadata last.
  const std::string header = R"({"w":{"dtype":"F64","shape":[2],"data_offsets":[12,28]},)"
                             R"("i":{"dtype":"I32","shape":[3],"data_offsets":[0,12]},)"
                             R"("e":{"dtype":"F32","shape":[0,4],"data_offsets":[28,28]},)"
                             R"("h":{"dtype":"F16","shape":[],"data_offsets":[28,30]},)"
                             R"("b":{"dtype":"BF16","shape":[1,1],"data_offsets":[30,32]},)"
                             R"("n":{"dtype":"I64","shape":[1],"data_offsets":[32,40]},)"
                             R"("u":{"dtype":"U8","shape":[2],"data_offsets":[40,42]},)"
                             R"("__metadata__":{"format":"pt"}})";
  const std::string data = little_endian(7, 4) + little_endian(static_cast<uint32_t>(-2), 4) + little_endian(40000, 4) +
                           little_endian(std::bit_cast<uint64_t>(1.5), 8) +
                           little_endian(std::bit_cast<uint64_t>(-0.25), 8) + little_endian(0x3C00, 2) /* f16 1.0 */ +
                           little_endian(0xC000, 2) /* bf16 -2.0 */ +
                           little_endian(static_cast<uint64_t>(-5000000000LL), 8) + "\x03\xfe";
  ASSERT_EQ(data.size(), 42u);
  const std::string path = dir.file("by_hand.safetensors");
  testing::write_file(path, safetensors_bytes(header, data));

  const SafetensorsFile file(path);
  const Stream stream = Stream::create(Device::cpu());
  EXPECT_EQ(file.metadata("format"), "pt");
  EXPECT_EQ(file.names(), (std::vector<std::string>{"i", "w", "e", "h", "b", "n", "u"}));
  EXPECT_EQ(file.read("i", stream).to_vector<int32_t>(stream), (std::vector<int32_t>{7, -2, 40000}));
  EXPECT_EQ(file.read("w", stream).to_vector<double>(stream), (std::vector<double>{1.5, -0.25}));
  EXPECT_EQ(file.read("e", stream).shape(), (Shape{0, 4}));
  EXPECT_EQ(testing::to_doubles(file.read("h", stream), stream), std::vector<double>{1.0});
  EXPECT_EQ(file.read("h", stream).shape(), Shape{});
  EXPECT_EQ(testing::to_doubles(file.read("b", stream), stream), std::vector<double>{-2.0});
  EXPECT_EQ(file.read("n", stream).to_vector<int64_t>(stream), std::vector<int64_t>{-5000000000LL});
  EXPECT_EQ(file.read("u", stream).to_vector<uint8_t>(stream), (std::vector<uint8_t>{3, 254}));
  // Trailing whitespace after the JSON is accepted too.
  testing::write_file(path, safetensors_bytes(header + "   ", data));
  EXPECT_EQ(SafetensorsFile(path).read("w", stream).to_vector<double>(stream), (std::vector<double>{1.5, -0.25}));
}

struct CorruptCase {
  const char* what;
  std::string bytes;
  const char* expected;  // in the message, besides the path
};

// A rejected file's descriptor is closed (the fuzzer ran out of descriptors after 20,000 rejections).
TEST(Safetensors, RejectedFilesLeaveNoDescriptorOpen) {
  testing::ScratchDir dir("st_fd");
  const std::string path = dir.file("bad.safetensors");
  testing::write_file(path, little_endian(100, 8) + "{\"a\":");
  const auto open_descriptors = [] {
    return std::distance(std::filesystem::directory_iterator("/proc/self/fd"), std::filesystem::directory_iterator());
  };
  const auto before = open_descriptors();
  for (int i = 0; i < 100; ++i) EXPECT_ERROR_MENTIONS("reaches past the end of the file", SafetensorsFile{path});
  EXPECT_EQ(open_descriptors(), before);
}

TEST(Safetensors, CorruptFilesAreRejectedWithTheFileAndTheProblem) {
  testing::ScratchDir dir("st_corrupt");
  const std::string entry_a = R"("a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]})";
  const std::string eight(8, '\x11');
  const std::vector<CorruptCase> cases = {
      {"shorter than the length field", "\x05\x00\x00", "too few"},
      {"truncated header", little_endian(100, 8) + "{\"a\":", "reaches past the end of the file"},
      {"header length over the limit", little_endian(200'000'000, 8) + "{}", "exceeds the format's limit"},
      {"bad JSON", safetensors_bytes("{\"a\":{\"dtype\":", eight), "not valid JSON"},
      {"not an object", safetensors_bytes("[1, 2]", ""), "must be a JSON object"},
      {"unknown dtype", safetensors_bytes(R"({"a":{"dtype":"F8_E4M3","shape":[8],"data_offsets":[0,8]}})", eight),
       "tensor 'a': dtype \"F8_E4M3\" is not supported"},
      {"overlap",
       safetensors_bytes("{" + entry_a + R"(,"b":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}})", eight + "1234"),
       "tensor 'b' (bytes 4 to 12) overlaps tensor 'a'"},
      {"hole",
       safetensors_bytes("{" + entry_a + R"(,"b":{"dtype":"F32","shape":[1],"data_offsets":[12,16]}})",
                         eight + "12345678"),
       "bytes 8 to 12 of the data section, before tensor 'b', belong to no tensor"},
      {"offsets out of range", safetensors_bytes(R"({"a":{"dtype":"F32","shape":[4],"data_offsets":[0,16]}})", eight),
       "tensor 'a': data_offsets [0,16] reach past the end of the data section (8 bytes)"},
      {"bytes after the last tensor", safetensors_bytes("{" + entry_a + "}", eight + "xx"),
       "bytes 8 to 10 of the data section, at its end, belong to no tensor"},
      {"shape and offsets disagree",
       safetensors_bytes(R"({"a":{"dtype":"F32","shape":[3],"data_offsets":[0,8]}})", eight),
       "tensor 'a': shape [3] of \"F32\" needs 12 bytes, but data_offsets [0,8] span 8"},
      {"duplicate key", safetensors_bytes("{" + entry_a + "," + entry_a + "}", eight),
       "the header: the key 'a' appears twice in one object"},
      {"nested too deep", safetensors_bytes(std::string(300, '[') + std::string(300, ']'), ""),
       "the header: nested deeper than 256 levels"},
      {"negative size", safetensors_bytes(R"({"a":{"dtype":"F32","shape":[-2],"data_offsets":[0,8]}})", eight),
       "tensor 'a': every shape entry must be a non-negative integer"},
      {"reversed offsets", safetensors_bytes(R"({"a":{"dtype":"U8","shape":[0],"data_offsets":[8,0]}})", eight),
       "end before they begin"},
      {"metadata not strings", safetensors_bytes("{" + entry_a + R"(,"__metadata__":{"step":12}})", eight),
       "__metadata__ entry 'step' must be a string"},
      {"entry without offsets", safetensors_bytes(R"({"a":{"dtype":"F32","shape":[2]}})", eight),
       "tensor 'a': expected an object with \"dtype\", \"shape\" and \"data_offsets\""},
  };
  for (const CorruptCase& c : cases) {
    const std::string path = dir.file(std::string(c.what) + ".safetensors");
    testing::write_file(path, c.bytes);
    const std::string message = testing::error_message([&] { SafetensorsFile file(path); });
    EXPECT_NE(message.find("'" + path + "'"), std::string::npos) << c.what << ": " << message;
    EXPECT_NE(message.find(c.expected), std::string::npos) << c.what << ": " << message;
  }
  EXPECT_ERROR_MENTIONS(dir.file("absent.safetensors"), SafetensorsFile(dir.file("absent.safetensors")));
}

TEST(Safetensors, ReadIntoChecksDTypeAndShapeNamingFileAndTensor) {
  testing::ScratchDir dir("st_read_into");
  const Stream stream = Stream::create(Device::cpu());
  const std::string path = dir.file("x.safetensors");
  save_safetensors(path, {{"fc.weight", random_of(Shape{2, 3}, DType::f32, stream, 1)}}, {}, stream);
  const SafetensorsFile file(path);
  const Tensor wrong_dtype = Tensor::empty(Shape{2, 3}, DType::f64, stream);
  EXPECT_ERROR_MENTIONS("safetensors file '" + path +
                            "', tensor 'fc.weight': the file holds F32 [2, 3], the "
                            "destination is F64 [2, 3]",
                        file.read_into("fc.weight", wrong_dtype, stream));
  const Tensor wrong_shape = Tensor::empty(Shape{3, 2}, DType::f32, stream);
  EXPECT_ERROR_MENTIONS("destination is F32 [3, 2]", file.read_into("fc.weight", wrong_shape, stream));
  EXPECT_ERROR_MENTIONS("safetensors file '" + path + "' has no tensor 'fc.bias'", file.read("fc.bias", stream));
  EXPECT_ERROR_MENTIONS("__metadata__ has no entry 'step'", file.metadata("step"));
}

TEST(Safetensors, BadNamesAreRejectedAndTheExistingFileKept) {
  testing::ScratchDir dir("st_bad_names");
  const Stream stream = Stream::create(Device::cpu());
  const std::string path = dir.file("x.safetensors");
  const Tensor t = random_of(Shape{4}, DType::f32, stream, 1);
  save_safetensors(path, {{"kept", t}}, {}, stream);
  const std::string before = testing::read_file(path);
  EXPECT_ERROR_MENTIONS("tensor name 'w' appears twice", save_safetensors(path, {{"w", t}, {"w", t}}, {}, stream));
  EXPECT_ERROR_MENTIONS("'__metadata__' is not a valid tensor name",
                        save_safetensors(path, {{"__metadata__", t}}, {}, stream));
  EXPECT_ERROR_MENTIONS("not valid UTF-8", save_safetensors(path, {{"bad\xff", t}}, {}, stream));
  EXPECT_ERROR_MENTIONS("tensor 'u' is undefined", save_safetensors(path, {{"u", Tensor()}}, {}, stream));
  EXPECT_EQ(testing::read_file(path), before);
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir.path()), std::filesystem::directory_iterator()), 1);
}

}  // namespace
}  // namespace baton
