// Helpers shared by the engine tests: building Operations, running a batch
// to completion (the sharded engine completes on another thread), and the
// engine configurations every suite runs against.
//
// Operation builders keep string_views to their arguments: pass literals or
// strings that outlive the batch.
#pragma once

#include <future>
#include <string>
#include <string_view>
#include <vector>

#include <gtest/gtest.h>

#include "engines/engine.h"
#include "engines/operation.h"

namespace kvlab::testing {

// Iteration counts shrink under ThreadSanitizer, which runs ~10x slower.
#if defined(__SANITIZE_THREAD__)
inline constexpr int kStressScale = 2;
#else
inline constexpr int kStressScale = 8;
#endif

inline Operation MakeOp(OpCode code, std::string_view key = {}, std::string_view value = {},
                        int64_t integer = 0) {
  Operation op;
  op.code = code;
  op.key = key;
  op.value = value;
  op.integer = integer;
  return op;
}
inline Operation Get(std::string_view key) { return MakeOp(OpCode::kGet, key); }
inline Operation Set(std::string_view key, std::string_view value, SetOptions set = {}) {
  Operation op = MakeOp(OpCode::kSet, key, value);
  op.set = set;
  return op;
}
inline Operation GetSet(std::string_view key, std::string_view value) {
  return MakeOp(OpCode::kGetSet, key, value);
}
inline Operation Del(std::string_view key) { return MakeOp(OpCode::kDel, key); }
inline Operation Exists(std::string_view key) { return MakeOp(OpCode::kExists, key); }
inline Operation IncrBy(std::string_view key, int64_t delta) {
  return MakeOp(OpCode::kIncrBy, key, {}, delta);
}
inline Operation Append(std::string_view key, std::string_view value) {
  return MakeOp(OpCode::kAppend, key, value);
}
inline Operation Strlen(std::string_view key) { return MakeOp(OpCode::kStrlen, key); }
inline Operation ExpireAt(std::string_view key, int64_t deadline_ms) {
  return MakeOp(OpCode::kExpireAt, key, {}, deadline_ms);
}
inline Operation Pttl(std::string_view key) { return MakeOp(OpCode::kPttl, key); }
inline Operation Persist(std::string_view key) { return MakeOp(OpCode::kPersist, key); }
inline Operation DbSize() { return MakeOp(OpCode::kDbSize); }
inline Operation FlushAll() { return MakeOp(OpCode::kFlushAll); }

// Executes `ops` as one batch and waits until `done` has run.
inline std::vector<OpResult> RunBatch(Engine& engine, const std::vector<Operation>& ops) {
  Batch batch;
  for (const Operation& op : ops) batch.Add(op);
  std::promise<void> completed;
  engine.Execute(batch, [&completed] { completed.set_value(); });
  completed.get_future().wait();
  return std::move(batch.results);
}
inline OpResult RunOp(Engine& engine, const Operation& op) {
  return RunBatch(engine, std::vector{op})[0];
}

// gtest matchers would hide which field differs; these print the whole result.
inline std::string Describe(const OpResult& r) {
  switch (r.kind) {
    case OpResult::Kind::kNil:
      return "nil";
    case OpResult::Kind::kOk:
      return "OK";
    case OpResult::Kind::kInteger:
      return "(integer) " + std::to_string(r.integer);
    case OpResult::Kind::kBulk:
      return "\"" + r.bulk.str() + "\"";
    case OpResult::Kind::kError:
      return "error " + std::to_string(static_cast<int>(r.error));
    case OpResult::Kind::kReply:
      return "a reply of several values";
  }
  return "?";
}
inline std::string Nil() { return "nil"; }
inline std::string Ok() { return "OK"; }
inline std::string Int(int64_t v) { return "(integer) " + std::to_string(v); }
inline std::string Bulk(std::string_view v) { return "\"" + std::string(v) + "\""; }
inline std::string Err(EngineError e) { return "error " + std::to_string(static_cast<int>(e)); }

// One engine configuration under test, with a name for gtest.
struct EngineCase {
  std::string name;
  EngineConfig config;
};

inline EngineCase MakeCase(std::string name, std::string kind, unsigned shards = 0,
                           HopMode hop = HopMode::kCommand) {
  EngineCase c{std::move(name), {}};
  c.config.kind = std::move(kind);
  c.config.shards = shards;
  c.config.hop = hop;
  return c;
}

// Every engine configuration that may be driven from many threads at once
// (all but `single`), for INSTANTIATE_TEST_SUITE_P(..., ValuesIn(...)).
inline std::vector<EngineCase> MultithreadedCases() {
  return {MakeCase("sharded1", "sharded", 1),
          MakeCase("sharded4", "sharded", 4),
          MakeCase("sharded4_batch", "sharded", 4, HopMode::kBatch),
          MakeCase("concurrent", "concurrent"),
          MakeCase("striped", "striped"),
          MakeCase("owner1", "owner", 1),
          MakeCase("owner4", "owner", 4)};
}

// Every engine configuration: `single` and the multithreaded ones.
inline std::vector<EngineCase> AllCases() {
  std::vector<EngineCase> cases = {MakeCase("single", "single")};
  for (EngineCase& c : MultithreadedCases()) cases.push_back(std::move(c));
  return cases;
}

inline std::string CaseName(const ::testing::TestParamInfo<EngineCase>& info) {
  return info.param.name;
}

}  // namespace kvlab::testing
