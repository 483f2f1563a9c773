// Replay driver for builds without libFuzzer (GCC, the normal build): runs
// LLVMFuzzerTestOneInput on every file of the corpus directories given, then
// on deterministic pseudo-random mutations of them, so `make test` checks the
// fuzz invariants on every commit. A failing input aborts; its file name (or
// the mutation's seed and bytes, written to ./replay-crash-<n>) is printed
// first so it can be added to the corpus.
//
// Usage: resp_session_replay [--mutations N] DIR_OR_FILE...
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <string_view>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace {

struct Seed {
  std::string name;
  std::string bytes;
};

// Deterministic xorshift64*: the same mutations on every machine and run.
class Rng {
 public:
  explicit Rng(uint64_t seed) : state_(seed | 1) {}
  uint64_t Next() {
    state_ ^= state_ >> 12;
    state_ ^= state_ << 25;
    state_ ^= state_ >> 27;
    return state_ * 2685821657736338717ull;
  }
  size_t Below(size_t n) { return n == 0 ? 0 : Next() % n; }

 private:
  uint64_t state_;
};

// Tokens that steer mutations towards the parser's interesting edges.
constexpr std::string_view kTokens[] = {"\r\n",
                                        "\r",
                                        "\n",
                                        "*",
                                        "$",
                                        "-1",
                                        "0",
                                        "-",
                                        "9223372036854775807",
                                        "99999999999999999999",
                                        "536870912",
                                        "*3\r\n$3\r\nSET\r\n",
                                        "$-1\r\n",
                                        "\"",
                                        "'",
                                        "\\x",
                                        "\\",
                                        " ",
                                        "\t",
                                        std::string_view("\0", 1),
                                        "QUIT\r\n",
                                        "PING\r\n",
                                        "*1\r\n$4\r\nPING\r\n"};

// libFuzzer runs with -max_len=8192 (tests/fuzz/run_fuzzer.sh); mutations
// stay within the same size.
constexpr size_t kMaxMutantSize = 8192;

std::string Mutate(const std::vector<Seed>& seeds, const std::string& base, Rng& rng) {
  std::string bytes = base.substr(0, kMaxMutantSize);
  int edits = 1 + static_cast<int>(rng.Below(4));
  for (int i = 0; i < edits; ++i) {
    size_t pos = rng.Below(bytes.size() + 1);
    switch (rng.Below(6)) {
      case 0:  // flip one bit
        if (!bytes.empty()) bytes[rng.Below(bytes.size())] ^= static_cast<char>(1u << rng.Below(8));
        break;
      case 1:  // insert a token
        bytes.insert(pos, kTokens[rng.Below(std::size(kTokens))]);
        break;
      case 2:  // erase a range
        bytes.erase(pos, rng.Below(16));
        break;
      case 3:  // overwrite with a random byte
        if (!bytes.empty()) bytes[rng.Below(bytes.size())] = static_cast<char>(rng.Next());
        break;
      case 4: {  // splice in part of another seed (pipelines of mixed commands)
        const std::string& other = seeds[rng.Below(seeds.size())].bytes;
        size_t from = rng.Below(other.size() + 1);
        bytes.insert(pos, other.substr(from, rng.Below(64)));
        break;
      }
      default:  // duplicate a range
        bytes.insert(pos, bytes.substr(rng.Below(bytes.size() + 1), rng.Below(32)));
        break;
    }
  }
  if (bytes.size() > kMaxMutantSize) bytes.resize(kMaxMutantSize);
  return bytes;
}

std::string ReadFile(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

void Run(std::string_view bytes) {
  LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
}

}  // namespace

int main(int argc, char** argv) {
  size_t mutations = 2000;
  std::vector<Seed> seeds;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--mutations" && i + 1 < argc) {
      mutations = std::strtoull(argv[++i], nullptr, 10);
      continue;
    }
    std::error_code ec;
    if (std::filesystem::is_directory(arg, ec)) {
      for (const auto& entry : std::filesystem::directory_iterator(arg)) {
        if (entry.is_regular_file())
          seeds.push_back({entry.path().string(), ReadFile(entry.path())});
      }
    } else if (std::filesystem::is_regular_file(arg, ec)) {
      seeds.push_back({arg, ReadFile(arg)});
    } else {
      std::fprintf(stderr, "resp_session_replay: %s: no such file or directory\n", arg.c_str());
      return 2;
    }
  }
  if (seeds.empty()) {
    std::fprintf(stderr,
                 "usage: resp_session_replay [--mutations N] DIR_OR_FILE...\n"
                 "  (no corpus files found)\n");
    return 2;
  }
  // Directory order is unspecified; sort so mutation i is the same everywhere.
  std::sort(seeds.begin(), seeds.end(),
            [](const Seed& a, const Seed& b) { return a.name < b.name; });

  for (const Seed& seed : seeds) {
    std::fprintf(stderr, "replay %s\n", seed.name.c_str());
    Run(seed.bytes);
  }
  Rng rng(0x6b766c6162ull);  // "kvlab"
  for (size_t i = 0; i < mutations; ++i) {
    const Seed& base = seeds[rng.Below(seeds.size())];
    std::string mutated = Mutate(seeds, base.bytes, rng);
    // Written before running so a crash leaves the input behind; removed after.
    std::string crash_file = "replay-crash-" + std::to_string(i);
    {
      std::ofstream out(crash_file, std::ios::binary);
      out << mutated;
    }
    Run(mutated);
    std::filesystem::remove(crash_file);
  }
  std::printf("resp_session_replay: %zu corpus files and %zu mutations passed\n", seeds.size(),
              mutations);
  return 0;
}
