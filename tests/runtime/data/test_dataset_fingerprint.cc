// dataset_fingerprint: equal for the same data, different for other samples, sizes or layouts.
#include <gtest/gtest.h>

#include "runtime/data/dataset.h"
#include "runtime/data/dataset_fingerprint.h"

namespace baton::data {
namespace {

std::vector<std::string> fingerprint(const std::string& spec, uint64_t seed, Split split = Split::train) {
  return dataset_fingerprint(*open_dataset(spec, split, seed), "train");
}

TEST(DatasetFingerprint, SameDataSameLinesOtherDataAnotherLine) {
  const std::vector<std::string> a = fingerprint("synthetic:3x8x8:4:64", 0);
  ASSERT_EQ(a.size(), 4u);
  EXPECT_EQ(a[0], "train.samples = 64");
  EXPECT_EQ(a[1], "train.classes = 4");
  EXPECT_NE(a[2].find("train.layout = images [3, 8, 8]"), std::string::npos) << a[2];
  EXPECT_NE(a[3].find("train.first_samples = fnv1a 0x"), std::string::npos) << a[3];
  EXPECT_NE(a[3].find("(of 8 samples)"), std::string::npos) << a[3];
  EXPECT_EQ(fingerprint("synthetic:3x8x8:4:64", 0), a);
  // Other samples of the same size and shape: only the hash tells them apart.
  const std::vector<std::string> other_seed = fingerprint("synthetic:3x8x8:4:64", 1);
  EXPECT_EQ(std::vector<std::string>(other_seed.begin(), other_seed.begin() + 3),
            std::vector<std::string>(a.begin(), a.begin() + 3));
  EXPECT_NE(other_seed[3], a[3]);
  EXPECT_NE(fingerprint("synthetic:3x8x8:4:32", 0)[0], a[0]);
  EXPECT_NE(fingerprint("synthetic:3x8x8:5:64", 0)[1], a[1]);
  EXPECT_NE(fingerprint("synthetic:1x8x8:4:64", 0)[2], a[2]);
}

TEST(DatasetFingerprint, TokenDatasetsAreHashedThroughTheirFields) {
  const std::vector<std::string> a = fingerprint("tokens:16:8:512", 0);
  EXPECT_EQ(fingerprint("tokens:16:8:512", 0), a);
  EXPECT_NE(fingerprint("tokens:16:8:512", 1)[3], a[3]);
}

}  // namespace
}  // namespace baton::data
