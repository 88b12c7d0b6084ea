// parse_json_text and read_json_file: what nlohmann's parser accepts silently (a key twice) or turns
// into a crash later (a document nested 100,000 deep, printed or freed recursively) is one error line
// naming the source; documents up to the depth limit parse.
#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include "runtime/graph/json_fields.h"
#include "tests/support/scratch_dir.h"
#include "tests/support/test_support.h"

namespace baton {
namespace {

std::string nested(int depth, const std::string& open, const std::string& close) {
  std::string text;
  for (int i = 0; i < depth; ++i) text += open;
  text += "1";
  for (int i = 0; i < depth; ++i) text += close;
  return text;
}

TEST(JsonText, DocumentsNestedTooDeepAreRefusedWithoutRecursing) {
  EXPECT_ERROR_MENTIONS("spec.json: nested deeper than 256 levels",
                        parse_json_text(nested(100'000, "[", "]"), "spec.json"));
  EXPECT_ERROR_MENTIONS("nested deeper than 256 levels", parse_json_text(nested(100'000, "{\"a\":", "}"), "c.json"));
  EXPECT_ERROR_MENTIONS("nested deeper than 256 levels", parse_json_text(nested(kMaxJsonDepth + 1, "[", "]"), "x"));
  EXPECT_EQ(parse_json_text(nested(kMaxJsonDepth, "[", "]"), "x").dump().size(), 2 * kMaxJsonDepth + 1u);
}

TEST(JsonText, AKeyTwiceInOneObjectIsRefusedAtAnyDepth) {
  EXPECT_ERROR_MENTIONS("config.json: the key 'lr' appears twice in one object",
                        parse_json_text(R"({"lr": 0.1, "steps": 3, "lr": 0.2})", "config.json"));
  EXPECT_ERROR_MENTIONS("the key 'k' appears twice",
                        parse_json_text(R"({"a": [{"k": 1}, {"k": 2, "b": {"k": 3, "k": 4}}]})", "x"));
  // The same key in sibling objects is fine.
  EXPECT_EQ(parse_json_text(R"({"a": [{"k": 1}, {"k": 2}], "k": 3})", "x")["k"], 3);
}

// An object of many member objects (a safetensors header of many tensors, a large config) parses in
// time linear in its size: nlohmann's callback parser rescanned the enclosing object at the end of
// every member object, so 100,000 members took minutes.
TEST(JsonText, AnObjectOfManyMemberObjectsParsesInOnePass) {
  std::string text = "{";
  constexpr int kMembers = 100'000;
  for (int i = 0; i < kMembers; ++i) text += (i ? ",\"t" : "\"t") + std::to_string(i) + "\":{\"shape\":[0]}";
  text += "}";
  const nlohmann::json parsed = parse_json_text(text, "header");
  EXPECT_EQ(parsed.size(), static_cast<size_t>(kMembers));
  EXPECT_EQ(parsed["t99999"]["shape"][0], 0);
}

TEST(JsonText, SyntaxErrorsAndFilesNameTheirSource) {
  EXPECT_ERROR_MENTIONS("x.json: not valid JSON", parse_json_text("{\"a\": ", "x.json"));
  testing::ScratchDir dir("json_text");
  const std::string path = dir.path() / "twice.json";
  std::ofstream(path) << R"({"model": "resnet20", "model": "resnet56"})";
  EXPECT_ERROR_MENTIONS(path + ": the key 'model' appears twice in one object", read_json_file(path, "config file"));
}

}  // namespace
}  // namespace baton
