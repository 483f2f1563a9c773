// The RESP layer without an engine: how fast the parser turns request bytes
// into arguments, and how fast the reply writer renders replies.
//
// Parser: each iteration appends one read's worth of bytes to the read buffer
// (as a connection does), parses every command in it, and compacts the buffer
// — `small` is one GET per read, `pipelined` 16 mixed GET/SET commands per
// read, `pipelined_1k` 16 SETs with 1 KiB values. Reported as commands/s
// (items) and MB/s (bytes).
// Reply writer: 16 replies of each kind per iteration into a reused buffer.
#include <string>
#include <string_view>
#include <vector>

#include <benchmark/benchmark.h>

#include "harness/clients/resp_encoding.h"
#include "server/reply_writer.h"
#include "server/resp_parser.h"

namespace kvlab::micro {
namespace {

std::string Command(std::initializer_list<std::string_view> args) {
  std::string out;
  harness::AppendCommand(&out, args);
  return out;
}

struct Read {
  std::string bytes;
  int commands = 0;
};

Read SmallRead() { return {Command({"GET", "key:00001234"}), 1}; }

Read PipelinedRead() {
  Read read;
  for (int i = 0; i < 16; ++i) {
    const std::string key = "key:0000" + std::to_string(1000 + i);
    read.bytes += i % 2 ? Command({"SET", key, "0123456789abcdef"}) : Command({"GET", key});
  }
  read.commands = 16;
  return read;
}

Read LargeValueRead() {
  Read read;
  const std::string value(1024, 'x');
  for (int i = 0; i < 16; ++i)
    read.bytes += Command({"SET", "key:0000" + std::to_string(1000 + i), value});
  read.commands = 16;
  return read;
}

void BM_RespParse(benchmark::State& state, Read (*make)()) {
  const Read read = make();
  RespParser parser;
  std::string buffer;
  std::vector<std::string_view> args;
  for (auto _ : state) {
    buffer.append(read.bytes);
    int parsed = 0;
    while (parser.Parse(buffer, &args) == RespParser::Result::kOk) {
      benchmark::DoNotOptimize(args.data());
      ++parsed;
    }
    if (parsed != read.commands) {
      state.SkipWithError("parser returned the wrong number of commands");
      break;
    }
    parser.Compact(buffer);
  }
  state.SetItemsProcessed(state.iterations() * read.commands);
  state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(read.bytes.size()));
}
BENCHMARK_CAPTURE(BM_RespParse, small, SmallRead);
BENCHMARK_CAPTURE(BM_RespParse, pipelined, PipelinedRead);
BENCHMARK_CAPTURE(BM_RespParse, pipelined_1k, LargeValueRead);

template <typename Render>
void BM_ReplyWriter(benchmark::State& state, Render render) {
  std::string out;
  for (auto _ : state) {
    out.clear();
    ReplyWriter writer(out);
    for (int i = 0; i < 16; ++i) render(writer, i);
    benchmark::DoNotOptimize(out.data());
  }
  state.SetItemsProcessed(state.iterations() * 16);
  state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(out.size()));
}
BENCHMARK_CAPTURE(BM_ReplyWriter, ok, [](ReplyWriter& w, int) { w.Ok(); });
BENCHMARK_CAPTURE(BM_ReplyWriter, integer, [](ReplyWriter& w, int i) { w.Integer(1000000 + i); });
BENCHMARK_CAPTURE(BM_ReplyWriter, bulk16, [](ReplyWriter& w, int) { w.Bulk("0123456789abcdef"); });
BENCHMARK_CAPTURE(BM_ReplyWriter, nil, [](ReplyWriter& w, int) { w.Nil(); });

}  // namespace
}  // namespace kvlab::micro
