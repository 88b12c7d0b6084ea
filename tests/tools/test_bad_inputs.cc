// The catalogue of bad inputs: every command refuses each with exit code 1 and one line on stderr
// that names the file or flag, the field and what was expected, and leaves a run's checkpoint
// directory exactly as it was. Table-driven; each row is a user's (or an adversary's) mistake.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "tests/tools/cli_test.h"

namespace baton::cli {
namespace {

namespace fs = std::filesystem;

struct BadInput {
  std::string args;      // after `baton`; $D is the test directory
  std::string expected;  // in the one-line message; $D likewise
};

std::string replace_all(std::string text, const std::string& from, const std::string& to) {
  for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size()))
    text.replace(at, from.size(), to);
  return text;
}

// Every entry under `root`: path -> size and modification time.
std::map<std::string, std::string> tree_of(const fs::path& root) {
  std::map<std::string, std::string> out;
  for (const auto& e : fs::recursive_directory_iterator(root)) {
    const auto stamp = e.last_write_time().time_since_epoch().count();
    out[e.path().string()] =
        (e.is_regular_file() ? std::to_string(e.file_size()) : "dir") + "@" + std::to_string(stamp);
  }
  return out;
}

void write(const fs::path& path, const std::string& text) { std::ofstream(path) << text; }

constexpr const char* kTrain = "train --eval-every 0 ";

const std::vector<BadInput> kCases = {
    // Numbers on the command line: never wrapped, clamped or truncated.
    {"--seed -1", "--seed: must be a whole number from 0 up, got -1"},
    {"--steps 99999999999999999999", "--steps: must be a whole number from 0 up"},
    {"--epochs -1", "--epochs: must be a whole number from 0 up, got -1"},
    {"--workers 0", "--workers: must be a whole number from 1 to 256, got 0"},
    {"--workers 4294967297", "--workers: must be a whole number from 1 to 256"},
    {"--batch-size 0", "--batch-size: must be a whole number from 1 up, got 0"},
    {"--batch-size 2.5", "--batch-size: must be a whole number from 1 up, got 2.5"},
    {"--keep-checkpoints 0", "--keep-checkpoints: must be a whole number from 1"},
    {"--checkpoint-every -1", "--checkpoint-every: must be a whole number from 0 up"},
    {"--lr -1", "--lr: must be a number >= 0, got -1"},
    {"--lr nan", "--lr: must be a number >= 0, got nan"},
    {"--lr inf", "--lr: must be a number >= 0, got inf"},
    {"--momentum -0.5", "--momentum: must be a number >= 0"},
    {"--momentum 7", "optimizer: momentum must be in [0, 1), got 7"},
    {"--momentum 0", "nesterov needs momentum > 0 and dampening 0 (plain SGD: --momentum 0 --no-nesterov"},
    {"--nesterov --no-nesterov", "given 2 times"},
    {"--data-parallel 2 --average-every 4 --data synthetic:3x8x8:4:64 --batch-size 8",
     "--average-every and --averaging-exchange are for --model-averaging"},
    {"--data-parallel 2 --averaging-exchange tree --data synthetic:3x8x8:4:64 --batch-size 8",
     "are for --model-averaging periodic, bmuf, easgd or post-local"},
    {"--data-parallel 2 --model-averaging bmuf --block-lr inf --data synthetic:3x8x8:4:64 --batch-size 8",
     "--block-lr must be finite (got inf)"},
    {"--weight-decay -1", "--weight-decay: must be a number >= 0"},
    {"--warmup-steps -4", "--warmup-steps: must be a whole number from 0 up"},
    {"--label-smoothing 1.5", "label_smoothing must be in [0, 1), got 1.5"},
    {"--stages 0", "--stages: must be a whole number from 1"},
    {"--stages 2 --micro-batches 0", "--micro-batches: must be a whole number from 1"},
    // Flags that contradict each other or miss their partner.
    {"--model vgg11 --model-spec $D/spec_dup.json", "name two models: give one"},
    {"--micro-batches 4", "need --stages"},
    {"--grad-sync partition", "--grad-sync needs --groups G"},
    {"--model-averaging bmuf", "need --data-parallel N"},
    {"--unused-parameters ready", "--unused-parameters needs --data-parallel N or --groups G"},
    {"--data-parallel 2 --stages 2", "--data-parallel with pipeline settings"},
    {"--weights $D/ck/step-00000001/model.safetensors --resume $D/ck", "give one, not both"},
    {"--resume $D/ck --checkpoint-dir $D/elsewhere", "give one (a resumed run keeps saving where it resumes from)"},
    {"--nosuchflag", "The following argument was not expected: --nosuchflag"},
    {"--steps 3 --steps 4", "--steps is given 2 times; give it once"},
    {"--optimizer rmsprop", "--optimizer: rmsprop not in {sgd,adamw}"},
    // Names that do not exist.
    {"--model nosuchmodel", "nosuchmodel"},
    {"--data nosuchdata", "nosuchdata"},
    {"--data cifar10:$D/nowhere", "$D/nowhere"},
    {"--lr-schedule zigzag", "lr_schedule: field 'type' is \"zigzag\""},
    {"--config $D/cosine_up.json", "final_lr (0.5) must not exceed base_lr (0.1): the cosine schedule decays"},
    {"--optimizer adamw --momentum 0.9", "optimizer: unknown field 'momentum'"},
    {"--stages 2 --partitioner magic", "--partitioner is 'magic', expected uniform, block, antichain or hypergraph"},
    {"--stages 2 --schedule zigzag", "unknown schedule 'zigzag'"},
    {"--stages 2 --groups 2 --grad-sync sometimes", "sometimes"},
    {"--model-spec $D/missing.json", "$D/missing.json: cannot open the model spec"},
    {"--model-spec ''", "--model-spec: must name a file, got an empty path"},
    {"--weights ''", "--weights: must name a file, got an empty path"},
    {"--weights $D/missing.safetensors", "$D/missing.safetensors"},
    {"--weights $D/notjson.json", "$D/notjson.json"},
    // Config files and specs: syntax, duplicates, depth, types, ranges, unknown fields.
    {"--config $D/missing.json", "$D/missing.json: cannot open the config file"},
    {"--config $D/notjson.json", "$D/notjson.json: not valid JSON"},
    {"--config $D/dup.json", "$D/dup.json: the key 'model' appears twice in one object"},
    {"--config $D/deep.json", "$D/deep.json: nested deeper than 256 levels"},
    {"--config $D/unknown.json", "unknown field 'batch_sise'"},
    {"--config $D/wrongtype.json", "'steps'"},
    {"--config $D/workers_wrap.json", "'workers'"},
    {"--config $D/negative_seed.json", "'seed'"},
    {"--config $D/huge_steps.json", "'steps'"},
    {"--config $D/parallel_unknown.json", "unknown field 'micro_batch'"},
    {"--model-spec $D/spec_dup.json", "$D/spec_dup.json: the key 'nodes' appears twice in one object"},
    {"--model-spec $D/deep.json", "$D/deep.json: nested deeper than 256 levels"},
    // Files that are not regular files: refused at once, never a blocking open.
    {"--model-spec $D/fifo", "$D/fifo: cannot open the model spec: a FIFO, expected a regular file"},
    {"--config $D/fifo", "$D/fifo: cannot open the config file: a FIFO, expected a regular file"},
    {"--config $D/notes", "$D/notes: cannot open the config file: a directory, expected a regular file"},
    {"--weights $D/fifo", "cannot open '$D/fifo': a FIFO, expected a regular file"},
    {"--data cifar10:$D/fifo_data", "cannot open '$D/fifo_data/data_batch_1.bin': a FIFO, expected a regular file"},
    // Output paths that cannot be written: refused before anything runs.
    {"--metrics $D/plain.txt/m.jsonl",
     "cannot write the metrics file '$D/plain.txt/m.jsonl': $D/plain.txt is not a directory"},
    {"--checkpoint-dir $D/plain.txt/ck", "cannot create the checkpoint directory '$D/plain.txt/ck'"},
    {"--stages 2 --trace $D/plain.txt/t.json", "cannot write the trace '$D/plain.txt/t.json'"},
    {"--stages 2 --trace $D/nowhere/t.json", "$D/nowhere does not exist"},
    // Resuming what is not the run's newest complete checkpoint, or contradicting it.
    {"--resume $D/ck --batch-size 16", "was trained with batch_size 8, this command asks for 16"},
    {"--resume $D/ck --data shapes", "was trained with data synthetic:3x8x8:4:64"},
    {"--resume $D/ck --seed 9", "was trained with seed 0, this command asks for 9"},
    {"--resume $D/ck/step-00000001", "a newer checkpoint, $D/ck/step-00000002, follows it"},
    {"--resume $D/incomplete", "no complete checkpoint, only incomplete ones: step-00000003 (no model.safetensors)"},
    {"--resume $D/notes", "holds files but no checkpoint"},
    {"--checkpoint-dir $D/symlinked", "$D/symlinked/.lock: it is a symbolic link, which a run never follows"},
    // Messages a user meets first (issue 37.7): the real cause named.
    {"--model " + std::string(100000, 'x'), "… (100003 bytes)'; the models are: resnet18"},
    {"--batch-size 99999999999999999999",
     "--batch-size: must be a whole number from 1 up, got 99999999999999999999, which is too large (max "
     "9223372036854775807)"},
    {"--data synthetic:3x99999999999999999999x8",
     "height '99999999999999999999' is too large (max 9223372036854775807)"},
    {"--data synthetic:3x8x8:4:64 --batch-size 8 --epochs 9223372036854775807",
     "--epochs 9223372036854775807 at 8 steps each is more steps than a run can count"},
    // A directory belongs to one run (issue 37.2).
    {"--data synthetic:3x8x8:4:64 --batch-size 8 --workers 1 --steps 2 --checkpoint-dir $D/ck",
     "the checkpoint directory '$D/ck' holds another run's checkpoints (the newest, $D/ck/step-00000002)"},
    {"--resume $D/ck --overwrite", "overwrite (--overwrite) replaces the checkpoints of checkpoint_dir with a new run"},
    {"--checkpoint-dir $D/dangling",
     "cannot use the checkpoint directory '$D/dangling': it is a symbolic link to '$D/nothing', which does not exist"},
    // Resources and early refusals (issue 37.5): sizes estimated before they are allocated, bounds
    // checked before the work they bound.
    {"--data synthetic:3x8x8:4:64 --batch-size 8 --workers 1 --stages 2147483647",
     "--stages 2147483647: the model has only"},
    {"--data synthetic:3x65536x65536:10:64 --batch-size 64 --workers 1",
     "a batch of 64 samples takes 3.30 TB (51.54 GB each) and this machine has"},
};

// Commands other than train (their arguments complete).
const std::vector<BadInput> kOtherCommands = {
    {"", "A subcommand is required"},
    {"bench nosuch", "A subcommand is required (baton bench --help lists the options)"},
    {"plan --model resnet20 --batch -1", "--batch: must be a number > 0, got -1"},
    {"plan --model resnet20 --memory-cap nan", "--memory-cap: must be a number > 0, got nan"},
    {"plan --model resnet20 --stages 2 --partitioner magic", "magic"},
    {"plan --model resnet20 --cluster $D/dup.json", "$D/dup.json: the key 'model' appears twice in one object"},
    {"plan --profile $D/deep.json", "$D/deep.json: nested deeper than 256 levels"},
    {"plan --profile $D/fifo", "$D/fifo: cannot open the"},
    {"profile --model resnet20 --warmup -3", "--warmup: must be a number >= 0, got -3"},
    {"profile --model resnet20 --out $D/plain.txt/p.json", "cannot write the profile '$D/plain.txt/p.json'"},
    {"info --model resnet20 --batch 0", "--batch"},
    {"info --model resnet20 --batch 18446744073709551615", "--batch"},
    {"info --model resnet20 --batch 8 --input 3x1073741824x1073741824", "has more than 2^63 elements"},
    {"info --model-spec $D/spec_dup.json", "the key 'nodes' appears twice in one object"},
    {"export-spec --model resnet20 --out $D/plain.txt/s.json", "$D/plain.txt/s.json"},
    {"make-dataset --out $D/data --train 2", "--train"},
    {"make-dataset shapes --out $D/data --seed -1", "--seed: must be a whole number from 0 up, got -1"},
    {"bench comm --ranks -1", "--ranks: must be a whole number from 0 up, got -1"},
    // Planner flags the chosen objective would ignore (issue 37.6): refused, each naming the flag and why.
    {"plan --model resnet20 --objective pipedream --gpus 2 --replication bogus",
     "--objective pipedream does not take --replication: PipeDream's optimiser replicates each stage freely"},
    {"plan --model resnet20 --objective pipedream --gpus 2 --partitioner antichain",
     "--objective pipedream does not take --partitioner: PipeDream's optimiser searches its own antichain states"},
    {"plan --model resnet20 --objective pipedream --gpus 2 --schedule gpipe",
     "--objective pipedream does not take --schedule: PipeDream's objective prices whole mini-batches"},
    {"plan --model resnet20 --objective pipedream --gpus 2 --groups 2",
     "--objective pipedream does not take --groups: PipeDream's optimiser chooses the stages and their replicas"},
    {"plan --profile pipedream:$D/graph.txt --objective pipedream --gpus 2 --cluster pcie-8",
     "--objective pipedream does not take --cluster with --profile: the times are the profile's"},
    {"plan --profile pipedream:$D/graph.txt --objective pipedream --gpus 2 --batch 64",
     "--objective pipedream does not take --batch with --profile pipedream:FILE"},
    {"plan --profile pipedream:$D/graph.txt --classes 10",
     "--classes does not go with --profile: the profile already gives the model and its times"},
    {"plan --model resnet20 --stages 2 --bandwidth-gbs 10",
     "--bandwidth-gbs belongs to --objective pipedream: baton's objective takes the bandwidth of every link from "
     "--cluster"},
    {"plan --model resnet20 --stages 2 --activation-compression-ratio 2",
     "--activation-compression-ratio belongs to --objective pipedream"},
    {"plan --model resnet20 --stages 2 --straight-pipeline", "--straight-pipeline belongs to --objective pipedream"},
    {"plan --model resnet20 --gpus 2 --search --partitioner uniform",
     "--search does not take --partitioner: it tries every partitioner, schedule, chunk count and micro-batch count"},
    {"plan --model resnet20 --gpus 2 --search --micro-batches 4", "--search does not take --micro-batches"},
    {"plan --model resnet20 --stages 2 --chunks 3",
     "--chunks is read only with --schedule interleaved (stages per device), not with --schedule 1f1b"},
    {"plan --model resnet20 --objective pipedream --gpus 100000 --straight-pipeline",
     "resnet20: a straight pipeline of 100000 workers needs as many stages, and the graph has only"},
    {"plan --model resnet20 --objective pipedream --gpus 4 --straight-pipeline --memory-cap 0.000001",
     "finds no straight pipeline of exactly 4 workers that keeps each worker's stashed activations and parameters "
     "within the memory limit of 1e-06 GB"},
    // Messages a user meets first (issue 37.7): the real cause named.
    {"plan --model resnet20 --stages 2 --groups 1000000",
     "--groups 1000000: every group takes a share of the batch, and --batch 128 has fewer samples than that"},
    {"export-spec --model resnet20 --batch 99999999999999999999 --out $D/s.json",
     "--batch: '99999999999999999999' is too large (max 2147483648)"},
    // Resources and early refusals (issue 37.5).
    {"make-dataset shapes --out $D/data --train 2147483648",
     "cannot write 2147483648 train and 10000 test images into '$D/data': they take 6.60 TB (3073 bytes each)"},
    {"plan --model resnet20 --cluster $D/big_cluster.json",
     "at most 1024 devices in all (nodes 1024 x gpus_per_node 64 = 65536)"},
    {"bench pipeline --device cpu --stages 64",
     "--batch 32 must be divisible by --micro-batches 128 (the default, 2 x --stages)"},
};

class BadInputs : public CliTest {
 protected:
  void SetUp() override {
    const fs::path d = dir_;
    write(d / "plain.txt", "a file, not a directory\n");
    write(d / "notjson.json", "{\"model\": ");
    write(d / "dup.json", R"({"model": "resnet20", "model": "vgg11"})");
    write(d / "deep.json", std::string(100000, '[') + std::string(100000, ']'));
    write(d / "unknown.json", R"({"batch_sise": 8})");
    write(d / "wrongtype.json", R"({"steps": "ten"})");
    write(d / "workers_wrap.json", R"({"workers": 4294967297})");
    write(d / "negative_seed.json", R"({"seed": -3})");
    write(d / "huge_steps.json", R"({"steps": 18446744073709551615})");
    write(d / "parallel_unknown.json", R"({"parallel": {"stages": 2, "micro_batch": 2}})");
    write(d / "cosine_up.json", R"({"lr_schedule": {"type": "cosine", "base_lr": 0.1, "final_lr": 0.5}})");
    write(d / "spec_dup.json", R"({"inputs": [], "nodes": [], "nodes": []})");
    write(d / "big_cluster.json", R"({"device": "v100-pcie", "nodes": 1024, "gpus_per_node": 64,
        "intra": {"kind": "pcie", "bandwidth_gbs": 12, "latency_us": 10},
        "inter": {"kind": "ib", "bandwidth_gbs": 12, "latency_us": 10}})");
    fs::create_directories(d / "incomplete" / "step-00000003");
    fs::create_directories(d / "notes");
    ASSERT_EQ(::mkfifo((d / "fifo").c_str(), 0644), 0);
    fs::create_directories(d / "symlinked");
    fs::create_symlink(d / "plain.txt", d / "symlinked" / ".lock");
    fs::create_symlink(d / "nothing", d / "dangling");
    fs::create_directories(d / "fifo_data");
    ASSERT_EQ(::mkfifo((d / "fifo_data" / "data_batch_1.bin").c_str(), 0644), 0);
    write(d / "notes" / "readme.txt", "not a checkpoint\n");
    // A run's checkpoint directory, which no bad input may touch.
    const CliResult run = run_baton(
        std::string(kTrain) +
        "--data synthetic:3x8x8:4:64 --batch-size 8 --workers 1 --steps 2 --checkpoint-every 1 --checkpoint-dir " +
        (d / "ck").string());
    ASSERT_EQ(run.exit_code, 0) << run.err;
  }

  void expect_refused(const std::string& args, const std::string& expected) {
    const std::string d = dir_.string();
    const auto before = tree_of(dir_ / "ck");
    expect_one_line_error(replace_all(args, "$D", d), replace_all(expected, "$D", d));
    EXPECT_EQ(tree_of(dir_ / "ck"), before) << args;
    EXPECT_FALSE(fs::exists(dir_ / "elsewhere")) << args;
  }
};

TEST_F(BadInputs, EveryCommandRefusesEachWithOneLineAndExitCode1) {
  for (const BadInput& c : kCases) expect_refused(kTrain + c.args, c.expected);
  for (const BadInput& c : kOtherCommands) expect_refused(c.args, c.expected);
  EXPECT_GE(kCases.size() + kOtherCommands.size(), 60u);
}

// A checkpoint larger than the file-size limit (ulimit -f) is a write error naming the file, with
// exit code 1 and nothing half-saved, not SIGXFSZ ending the process without a word (exit 153).
TEST_F(BadInputs, AFileSizeLimitIsAWriteErrorNotASignal) {
  const fs::path ck = dir_ / "limited";
  const CliResult r = run_baton(std::string(kTrain) +
                                    "--data synthetic:3x8x8:4:64 --batch-size 8 --workers 1 --steps 2 "
                                    "--checkpoint-every 1 --checkpoint-dir " +
                                    ck.string(),
                                "ulimit -f 64;");
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find("File too large"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("model.safetensors"), std::string::npos) << r.err;
  for (const auto& e : fs::directory_iterator(ck)) EXPECT_EQ(e.path().filename(), ".lock") << e.path();
}

// Resuming a checkpoint past the run's end is refused, naming both steps ("done after 2 steps: train
// loss 0.0000" before). Not in the catalogue: the refusal comes after the directory's lock is taken.
TEST_F(BadInputs, ResumingPastTheRunsEndIsRefused) {
  const std::string ck = (dir_ / "ck").string();
  expect_one_line_error(std::string(kTrain) + "--resume " + ck + " --steps 1",
                        ck + "/step-00000002 is at step 2, past the end of this run at step 1");
}

// A BATON_LOG value that is not a level is reported (once) in every run, which goes on at info.
TEST_F(BadInputs, AnUnknownLogLevelIsReportedInEveryRun) {
  const CliResult r = run_baton("models", "BATON_LOG=garbage");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("[baton warn] environment variable BATON_LOG: unknown log level 'garbage'"), std::string::npos)
      << r.err;
}

}  // namespace
}  // namespace baton::cli
