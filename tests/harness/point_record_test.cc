// The point record: its header, label columns, quoting, cost cells (known
// answers), status and the --schema document.
#include "harness/output/point_record.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <limits>
#include <string>

#include "tests/harness/test_server.h"

namespace kvlab::harness {
namespace {

// The fields of one CSV line (RFC 4180 quoting).
std::vector<std::string> SplitCsv(const std::string& line) {
  std::vector<std::string> fields(1);
  bool quoted = false;
  for (size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quoted && c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
      fields.back() += '"';
      ++i;
    } else if (c == '"') {
      quoted = !quoted;
    } else if (c == ',' && !quoted) {
      fields.emplace_back();
    } else {
      fields.back() += c;
    }
  }
  return fields;
}

class PointRecordTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(ParseTarget("unix:///tmp/s.sock", &config_.target).ok());
    point_.threads = 4;
    point_.connections = 4;
    repetition_.repetition = 2;
    repetition_.ops = 1000;
    repetition_.seconds = 1.0;
    repetition_.ops_per_s = 1000;
    repetition_.client_cpu = 0.5;
    repetition_.server_cpu = 0.25;
    repetition_.watched.server_context_switches = 2000;
    repetition_.watched.server_cycles = 5'000'000;
    repetition_.latency.Record(10'000);
  }
  std::string Cell(const std::string& column, const std::vector<Label>& labels = {}) {
    const std::vector<std::string> names = RowColumns(labels);
    const std::string row = CsvRow(labels, {config_, point_, repetition_, histogram_});
    std::vector<std::string> cells = SplitCsv(row);
    for (size_t i = 0; i < names.size(); ++i) {
      if (names[i] == column) return cells.at(i);
    }
    ADD_FAILURE() << "no column " << column;
    return "";
  }

  LoadConfig config_;
  PointResult point_;
  RepetitionResult repetition_;
  std::string histogram_ = "histograms/p.json";
};

TEST_F(PointRecordTest, LabelsLeadInTheirOrderAndReplaceMeasuredColumnsOfTheirName) {
  const std::vector<Label> labels = {
      {"sweep", "seed1"}, {"transport", "remote"}, {"server", "redis"}};
  const std::vector<std::string> names = SplitCsv(CsvHeader(labels));
  ASSERT_GE(names.size(), 4u);
  EXPECT_EQ(names[0], "sweep");
  EXPECT_EQ(names[1], "transport");
  EXPECT_EQ(names[2], "server");
  EXPECT_EQ(names[3], "threads");
  EXPECT_EQ(std::count(names.begin(), names.end(), "transport"), 1);
  EXPECT_EQ(names.size(), PointColumns().size() + 2);
  EXPECT_EQ(Cell("transport", labels), "remote");  // the label, not the socket kvlab-load used
  EXPECT_EQ(Cell("transport"), "unix");
}

TEST_F(PointRecordTest, CostCellsAreKnownAnswersAndNaWhereNotMeasured) {
  EXPECT_EQ(Cell("server_cpu_us_per_op"), "250");  // 0.25 core-s / 1000 ops
  EXPECT_EQ(Cell("client_cpu_us_per_op"), "500");
  EXPECT_EQ(Cell("server_ctx_switches_per_op"), "2");
  EXPECT_EQ(Cell("server_cycles_per_op"), "5000");
  EXPECT_EQ(Cell("server_instructions_per_op"), "n/a");  // never an estimate
  EXPECT_EQ(Cell("foreign_cpu"), "n/a");                 // no --measured-cpus
  repetition_.server_cpu = -1;                           // no INFO cpu
  EXPECT_EQ(Cell("server_cpu"), "");
  EXPECT_EQ(Cell("server_cpu_us_per_op"), "n/a");
  EXPECT_EQ(Cell("histogram"), "histograms/p.json");
  EXPECT_EQ(Cell("repetition"), "2");
}

TEST_F(PointRecordTest, WhatTheLoadGeneratorDoesNotReportStaysBlank) {
  // redis-benchmark: no p90, no error count, no histogram.
  repetition_.p90_us = std::numeric_limits<double>::quiet_NaN();
  repetition_.errors_counted = false;
  repetition_.latency = LatencyHistogram();
  EXPECT_EQ(Cell("p90_us"), "");
  EXPECT_EQ(Cell("errors"), "");
  EXPECT_EQ(Cell("histogram"), "");
  EXPECT_EQ(Cell("ops"), "1000");
}

TEST_F(PointRecordTest, ADisturbedWindowSaysSoAndWhy) {
  EXPECT_EQ(Cell("status"), "ok");
  EXPECT_EQ(Cell("note"), "");
  repetition_.watched.foreign_cores = 0.4;
  repetition_.watched.steal_cores = 0;
  repetition_.watched.disturbed = true;
  config_.watch.disturbed_above_cores = 0.05;
  EXPECT_EQ(Cell("status"), "disturbed");
  EXPECT_EQ(Cell("foreign_cpu"), "0.400");
  EXPECT_EQ(Cell("note"),
            "disturbed: foreign CPU 0.40 cores, steal 0.00 on the measured CPUs (above 0.05)");
}

TEST(CsvFieldTest, QuotesOnlyWhatNeedsIt) {
  EXPECT_EQ(CsvField("plain"), "plain");
  EXPECT_EQ(CsvField("a,b"), "\"a,b\"");
  EXPECT_EQ(CsvField("say \"hi\""), "\"say \"\"hi\"\"\"");
}

TEST(LabelTest, ParsesNameEqualsValueAndRefusesBadNamesAndRepeats) {
  Label label;
  ASSERT_TRUE(ParseLabel("key_dist=zipf:0.99", &label).ok());
  EXPECT_EQ(label.name, "key_dist");
  EXPECT_EQ(label.value, "zipf:0.99");
  ASSERT_TRUE(ParseLabel("note=", &label).ok());
  EXPECT_EQ(label.value, "");
  EXPECT_FALSE(ParseLabel("novalue", &label).ok());
  EXPECT_FALSE(ParseLabel("=x", &label).ok());
  EXPECT_FALSE(ParseLabel("Bad-Name=x", &label).ok());
  EXPECT_FALSE(ValidateLabels({{"a", "1"}, {"a", "2"}}).ok());
  EXPECT_TRUE(ValidateLabels({{"a", "1"}, {"b", "2"}}).ok());
}

// Each cell is written in the format its column declares (and --schema
// prints): known values, then every declared format against its cell.
TEST_F(PointRecordTest, CellsFollowTheirColumnsDeclaredFormat) {
  repetition_.seconds = 1.2;
  repetition_.p99_us = 0.397;
  repetition_.client_bound = true;
  EXPECT_EQ(Cell("seconds"), "1.200000");
  EXPECT_EQ(Cell("ops"), "1000");
  EXPECT_EQ(Cell("p99_us"), "0.40");
  EXPECT_EQ(Cell("client_bound"), "true");
  EXPECT_EQ(Cell("behind"), "false");
  EXPECT_EQ(Cell("server_cpu_us_per_op"), "300");  // %.4g of 0.25 * 1.2 s * 1e6 / 1000
  for (const PointColumn& column : PointColumns()) {
    SCOPED_TRACE(column.name);
    const std::string format = column.cell_format;
    const std::string cell = Cell(column.name);
    if (column.kind == ColumnKind::kText) {
      EXPECT_EQ(format, "");
    } else if (format == "flag") {
      EXPECT_TRUE(cell == "true" || cell == "false") << cell;
    } else if (format == "count") {
      EXPECT_TRUE(cell.empty() || cell.find_first_not_of("-0123456789") == std::string::npos)
          << cell;
    } else {
      ASSERT_FALSE(format.empty());
      if (cell.empty() || cell == "n/a") continue;
      char again[64];
      std::snprintf(again, sizeof(again), format.c_str(), std::stod(cell));
      EXPECT_EQ(cell, again) << "not written as " << format;
    }
  }
}

TEST(SchemaTest, TheSchemaDocumentListsTheHeadersColumnsInOrder) {
  std::string output;
  const std::string program =
      "import json,sys; d=json.loads(sys.argv[1]); "
      "print(d['format'], ','.join(c['name'] for c in d['columns']), "
      "all(c['kind'] in ('number','text','flag') and c['meaning'] and "
      "(c['cell_format'] == '') == (c['kind'] == 'text') for c in d['columns']))";
  ASSERT_EQ(testing::RunProcess({KVLAB_PYTHON, "-c", program, SchemaJson()}, &output), 0) << output;
  EXPECT_EQ(output, std::string(kPointSchema) + " " + CsvHeader({}) + " True\n");
}

}  // namespace
}  // namespace kvlab::harness
