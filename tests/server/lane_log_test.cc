// The log of several lanes (server/lane_log.h): the lanes' replay order and
// where a crash between lanes' writes cuts them (net/lane_merge.h, known
// answers on hand-made files), and, on the engines of several lanes, that
// the lanes written by several connections at once replay to the same
// keyspace — before and after a BGREWRITEAOF — with no group half-applied
// wherever a lane's file is cut.
#include "server/lane_log.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <thread>

#include "server/aof_record.h"
#include "server/net/aof_loader.h"
#include "server/net/lane_merge.h"
#include "tests/server/resp_text.h"
#include "tests/server/session_driver.h"

namespace kvlab::test {
namespace {

std::string Group(uint64_t id, std::vector<uint32_t> lanes) {
  return GroupAnnotation(id, lanes) + "\r\n";
}

// The commands a merge replays, in its order.
std::string Replayed(const std::vector<std::string>& files) {
  std::vector<AppendLogScan> scans;
  for (uint32_t lane = 0; lane < files.size(); ++lane)
    scans.push_back(ScanAppendLog(files[lane], lane));
  const LaneMerge merge = MergeLanes(scans);
  EXPECT_TRUE(merge.corruption.empty()) << merge.corruption;
  std::string out;
  for (const auto& [lane, unit] : merge.order) {
    const AppendLogUnit& u = scans[lane].units[unit];
    out.append(files[lane], u.begin, u.end - u.begin);
  }
  return out;
}

const std::string kSetA = Encode({"SET", "a", "1"});
const std::string kSetB = Encode({"SET", "b", "1"});
const std::string kMset = Encode({"MSET", "a", "2", "b", "2"});
const std::string kIncrA = Encode({"INCR", "a"});

// A group is replayed once, where every lane has reached it; a lane's own
// records keep their order around it.
TEST(LaneMerge, AGroupRunsOnceWhereEveryLaneHasReachedIt) {
  const std::vector<std::string> files = {kSetA + Group(1, {0, 1}) + kMset + kIncrA,
                                          kSetB + Group(1, {0, 1})};
  EXPECT_EQ(Replayed(files), kSetA + kSetB + kMset + kIncrA);
}

// A crash left lane 1 without group 1's marker: lane 0 stops at the group
// (its INCR after it may have read the group's write), lane 1 keeps what
// it has, and each file's cut is where its replay stopped.
TEST(LaneMerge, ALaneStopsAtAGroupAnotherLaneNeverReached) {
  const std::string lane0 = kSetA + Group(1, {0, 1}) + kMset + kIncrA;
  const std::string lane1 = kSetB;
  std::vector<AppendLogScan> scans = {ScanAppendLog(lane0, 0), ScanAppendLog(lane1, 1)};
  const LaneMerge merge = MergeLanes(scans);
  ASSERT_TRUE(merge.corruption.empty());
  EXPECT_EQ(Replayed({lane0, lane1}), kSetA + kSetB);
  EXPECT_EQ(merge.replayed, (std::vector<size_t>{1, 1}));
  EXPECT_EQ(scans[0].units[1].cut, kSetA.size());  // the group's annotation is cut too
  EXPECT_EQ(merge.incomplete_groups, 1u);
  EXPECT_EQ(merge.max_group, 1u);
}

// The stop spreads: group 2 (lanes 0 and 2) comes after the incomplete
// group 1 in lane 0, so lane 2 stops at it too, while lane 2's records
// before it are kept.
TEST(LaneMerge, AStoppedLaneStopsTheGroupsAfterIt) {
  const std::string set_c = Encode({"SET", "c", "1"});
  const std::vector<std::string> files = {
      kSetA + Group(1, {0, 1}) + kMset + Group(2, {0, 2}) + kIncrA, kSetB,
      set_c + Group(2, {0, 2}) + set_c};
  EXPECT_EQ(Replayed(files), kSetA + kSetB + set_c);
}

// Every cut of one lane's file, at every byte: what the merge replays is
// the lanes' prefixes with every group whole (its record runs only where
// both markers are), and never a corruption.
TEST(LaneMerge, EveryCutOfALaneReplaysWholeGroupsOnly) {
  const std::string lane0 = kSetA + Group(1, {0, 1}) + kMset + kIncrA + Group(2, {0, 1}) + kMset;
  const std::string lane1 = kSetB + Group(1, {0, 1}) + kSetB + Group(2, {0, 1});
  for (size_t cut = 0; cut <= lane1.size(); ++cut) {
    const std::string replayed = Replayed({lane0, lane1.substr(0, cut)});
    size_t groups = 0;
    for (size_t at = replayed.find(kMset); at != std::string::npos;
         at = replayed.find(kMset, at + 1))
      ++groups;
    const size_t markers = cut >= lane1.size() ? 2 : cut >= lane1.find(kSetB, 1) ? 1 : 0;
    EXPECT_EQ(groups, markers) << "cut at " << cut;
    // INCR a follows group 1 in lane 0: it runs only if the group did.
    EXPECT_EQ(replayed.find(kIncrA) != std::string::npos, markers >= 1) << "cut at " << cut;
  }
}

// What the scan refuses or drops in a lane's file.
TEST(LaneScan, AGroupAnnotationIsTheRecordsInItsFirstLaneAndAMarkerElsewhere) {
  const std::string lead = Group(7, {0, 2}) + kMset;
  AppendLogScan scan = ScanAppendLog(lead, 0);
  ASSERT_EQ(scan.units.size(), 1u);
  EXPECT_EQ(scan.units[0].group, 7u);
  EXPECT_FALSE(scan.units[0].marker);
  EXPECT_EQ(scan.units[0].cut, 0u);
  scan = ScanAppendLog(lead, 2);  // lane 2: the annotation is a marker, MSET its own
  ASSERT_EQ(scan.units.size(), 2u);
  EXPECT_TRUE(scan.units[0].marker);
  // The lead's annotation without its whole record is a truncated tail.
  scan = ScanAppendLog(lead.substr(0, lead.size() - 3), 0);
  EXPECT_TRUE(scan.corruption.empty());
  EXPECT_EQ(scan.valid_bytes, 0u);
  EXPECT_TRUE(scan.units.empty());
  // A group that does not name the lane, two annotations in a row, or a
  // malformed one: corruption.
  EXPECT_FALSE(ScanAppendLog(lead, 1).corruption.empty());
  EXPECT_FALSE(ScanAppendLog(Group(1, {0, 1}) + Group(2, {0, 1}) + kMset, 0).corruption.empty());
  for (std::string bad : {"#kvlab-group:1:0\r\n", "#kvlab-group:1:1,0\r\n",
                          "#kvlab-group:x:0,1\r\n", "#kvlab-group:0:0,1\r\n"}) {
    EXPECT_FALSE(ScanAppendLog(bad + kMset, 0).corruption.empty()) << bad;
  }
}

// This run's folders: beside the test executable, in the build tree (a real
// disk: fsync means something), never in the folder it was started from (a
// run from the repository's root once left 78 log files there for git to
// pick up); removed when the tests end.
std::filesystem::path ThisRunsFolder() {
  return std::filesystem::read_symlink("/proc/self/exe").parent_path() / "lane_log_test" /
         std::to_string(::getpid());
}

class RemoveThisRunsFolder : public ::testing::Environment {
 public:
  void TearDown() override { std::filesystem::remove_all(ThisRunsFolder()); }
};
const auto* const kRemoveThisRunsFolder =
    ::testing::AddGlobalTestEnvironment(new RemoveThisRunsFolder);

// A fresh folder of this run's.
std::string FreshLogPath(const std::string& name) {
  const std::filesystem::path folder = ThisRunsFolder() / name;
  std::filesystem::remove_all(folder);
  std::filesystem::create_directories(folder);
  return (folder / "appendonly.aof").string();
}

std::string ReadFile(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(file), std::istreambuf_iterator<char>()};
}

// The log at `path` (its manifest's segments, each merged), as the
// commands a replay runs; *groups counts the group annotations seen.
std::string ReplayedLog(const std::string& path, size_t* groups = nullptr) {
  AofManifest manifest;
  bool found = false;
  EXPECT_TRUE(AofManifest::Read(ManifestPath(path), &manifest, &found).ok());
  EXPECT_TRUE(found);
  std::string out;
  for (const AofSegment& segment : manifest.segments) {
    std::vector<std::string> files;
    for (const std::string& file : segment.files) {
      files.push_back(ReadFile(FolderOf(path) + file));
      if (groups == nullptr) continue;
      for (size_t at = files.back().find("#kvlab-group:"); at != std::string::npos;
           at = files.back().find("#kvlab-group:", at + 1))
        ++*groups;
    }
    out += Replayed(files);
  }
  return out;
}

class LaneLogEngineTest : public ::testing::TestWithParam<std::string> {
 protected:
  void OpenLogged(const std::string& name, AppendFsync policy) {
    path_ = FreshLogPath(name + "-" + GetParam());
    kvlab_ = MakeEngineUnderTest(GetParam());
    ASSERT_TRUE(kvlab_.engine);
    ASSERT_EQ(kvlab_.engine->LogLanes(), 3u);
    ASSERT_TRUE(LaneLog::Open(path_, AppendLogLoad{}, GetParam() + "/3", 3, policy, &log_).ok());
    kvlab_.context->append_log = log_.get();
  }
  std::vector<std::thread> StartWriters(int rounds, std::atomic<int>* done = nullptr) {
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t) {
      threads.emplace_back([this, t, rounds, done] {
        SessionDriver driver(*kvlab_.context, 10 + t);
        const std::string me = std::to_string(t);
        for (int i = 0; i < rounds; ++i) {
          const std::string n = std::to_string(i);
          driver.Feed(Encode({"LPUSH", "list", me + ":" + n}) + Encode({"INCR", "counter"}) +
                      Encode({"SET", "k" + std::to_string(i % 10), me + n}) +
                      Encode({"MSET", "a", me + n, "b", me + n, "c", me + n}) +
                      Encode({"HINCRBY", "h", "f" + me, "1"}) + "MULTI\r\n" +
                      Encode({"APPEND", "trail", me}) + Encode({"RPUSH", "list2", n}) + "EXEC\r\n" +
                      Encode({"SADD", "set", n}) + Encode({"SPOP", "set"}));
          if (done != nullptr) done->fetch_add(1);
        }
      });
    }
    return threads;
  }
  std::string State() {
    SessionDriver reader(*kvlab_.context, 99);
    return reader.Feed(kState);
  }
  std::string StateAfterReplay(const std::string& commands) {
    EngineUnderTest fresh = MakeEngineUnderTest(GetParam());
    SessionDriver replay(*fresh.context);
    replay.Feed(commands);
    SessionDriver check(*fresh.context, 100);
    return check.Feed(kState);
  }
  static constexpr const char* kState =
      "LRANGE list 0 -1\r\nGET counter\r\nMGET a b c\r\nHGETALL h\r\nGET trail\r\n"
      "LRANGE list2 0 -1\r\nMGET k0 k1 k2 k3 k4 k5 k6 k7 k8 k9\r\nSMEMBERS set\r\nDBSIZE\r\n";
  std::string path_;
  EngineUnderTest kvlab_;
  std::unique_ptr<LaneLog> log_;
};

// Four connections at once: the three lanes, merged, replay to the same
// keyspace (the lists' order included); MSET over three shards and the
// transactions are groups.
TEST_P(LaneLogEngineTest, ConcurrentWritersReplayToTheSameKeyspace) {
  ASSERT_NO_FATAL_FAILURE(OpenLogged("replay", AppendFsync::kEverySec));
  for (std::thread& thread : StartWriters(150)) thread.join();
  const std::string expected = State();
  const DurableLog::Counters counters = log_->counters();
  EXPECT_EQ(counters.lanes, 3u);
  log_.reset();
  size_t groups = 0;
  const std::string replayed = ReplayedLog(path_, &groups);
  EXPECT_GE(groups, 4u * 150u * 3u);  // each MSET's three lanes at least
  EXPECT_EQ(StateAfterReplay(replayed), expected);
}

// BGREWRITEAOF while the writers go on: the manifest ends as the snapshot
// and the lanes opened at the mark, the old lanes' files are gone, and the
// log replays to the writers' keyspace.
TEST_P(LaneLogEngineTest, ARewriteWhileWritersGoOnReplaysToTheSameKeyspace) {
  ASSERT_NO_FATAL_FAILURE(OpenLogged("rewrite", AppendFsync::kAlways));
  std::atomic<int> done{0};
  std::vector<std::thread> threads = StartWriters(120, &done);
  while (done.load() < 120) std::this_thread::yield();
  SessionDriver admin(*kvlab_.context, 50);
  EXPECT_EQ(admin.Feed("BGREWRITEAOF\r\n"), "+Background append only file rewriting started\r\n");
  for (std::thread& thread : threads) thread.join();
  while (log_->counters().rewrite_in_progress)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  EXPECT_EQ(log_->counters().rewrites, 1u);
  EXPECT_TRUE(log_->counters().last_rewrite_ok);
  const std::string expected = State();
  log_.reset();
  AofManifest manifest;
  bool found = false;
  ASSERT_TRUE(AofManifest::Read(ManifestPath(path_), &manifest, &found).ok());
  ASSERT_EQ(manifest.segments.size(), 2u) << manifest.Render();
  EXPECT_EQ(manifest.segments[0].layout, "one");
  EXPECT_EQ(manifest.segments[1].files.size(), 3u);
  EXPECT_FALSE(std::filesystem::exists(FolderOf(path_) + "appendonly.aof.1.0"));
  EXPECT_EQ(StateAfterReplay(ReplayedLog(path_)), expected);
}

// MSETs over three lanes, then each lane's file cut at every 7th byte (in
// the middle of records and annotations and at their ends) with the other
// lanes whole: the replayed keyspace never has a, b and c from different
// MSETs.
TEST_P(LaneLogEngineTest, ACutLaneNeverLeavesHalfAGroup) {
  ASSERT_NO_FATAL_FAILURE(OpenLogged("cut", AppendFsync::kNo));
  SessionDriver driver(*kvlab_.context);
  for (int i = 0; i < 20; ++i) {
    const std::string n = std::to_string(i);
    driver.Feed(Encode({"MSET", "a", n, "b", n, "c", n}));
  }
  log_.reset();
  AofManifest manifest;
  bool found = false;
  ASSERT_TRUE(AofManifest::Read(ManifestPath(path_), &manifest, &found).ok());
  std::vector<std::string> files;
  for (const std::string& file : manifest.segments.back().files)
    files.push_back(ReadFile(FolderOf(path_) + file));
  for (uint32_t lane = 0; lane < files.size(); ++lane) {
    for (size_t cut = 0; cut <= files[lane].size(); cut += 7) {
      std::vector<std::string> cut_files = files;
      cut_files[lane].resize(cut);
      const std::string replies = StateAfterReplay(Replayed(cut_files));
      // MGET a b c: all three the same value, or all nil.
      const size_t at = replies.find("*3\r\n");
      ASSERT_NE(at, std::string::npos) << replies;
      std::istringstream lines(replies.substr(at + 4));
      std::vector<std::string> values;
      std::string line;
      while (values.size() < 3 && std::getline(lines, line)) {
        if (line == "$-1\r") {
          values.push_back("nil");
        } else if (std::getline(lines, line)) {
          values.push_back(line);
        }
      }
      ASSERT_EQ(values.size(), 3u) << replies;
      EXPECT_TRUE(values[0] == values[1] && values[1] == values[2])
          << "lane " << lane << " cut at " << cut << ": " << values[0] << " " << values[1] << " "
          << values[2];
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Engines, LaneLogEngineTest,
                         ::testing::Values("sharded", "sharded-batch", "owner"), EngineTestName);

}  // namespace
}  // namespace kvlab::test
