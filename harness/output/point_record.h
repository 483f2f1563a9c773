// The point record: the one row per point and repetition that kvlab-load
// writes to its CSV file and that an experiment run keeps, as is, in
// points.csv. Its columns are declared once, here (PointColumns(): name,
// kind, meaning, and how the cell is made); every reader takes the column
// names from the file's header or from `kvlab-load --schema`.
//
// A row starts with the caller's labels (`--label name=value`, in the order
// given: the experiment's variables, passed through untouched), then every
// measured column whose name no label took. Cells a measurement cannot give
// say "n/a" (cost columns) or are empty (server_cpu when the server does not
// answer INFO cpu), never an estimate.
//
// Thread safety: pure functions over immutable tables; thread-safe.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "harness/status.h"
#include "harness/sweep.h"

namespace kvlab::harness {

// Changes whenever a column is added, removed, renamed or changes meaning.
inline constexpr const char* kPointSchema = "kvlab-points/2";

// The event loop's settings as a row states them: 0 and "" for direct I/O.
int LoopThreadsOf(const LoadConfig& config);
const char* LoopFlushOf(const LoadConfig& config);

enum class ColumnKind { kNumber, kText, kFlag };
const char* ColumnKindName(ColumnKind kind);

// What a measured row is made from.
struct RowSource {
  const LoadConfig& config;
  const PointResult& point;
  const RepetitionResult& repetition;
  const std::string& histogram;  // the JSON file (--json) as given; "" when none
};

struct PointColumn {
  const char* name;
  ColumnKind kind;
  const char* meaning;
  // How the cell writes its figure: a printf format ("%.2f"), "count" (an
  // integer) or "flag" (true | false); "" for a text cell. The cell function
  // is handed it, so the format is written once, here; `--schema` prints it,
  // and a row composed elsewhere (the runner's merged rows) follows it.
  const char* cell_format;
  std::string (*cell)(const RowSource&, const char* cell_format);
};

// The measured columns, in their order in a row.
const std::vector<PointColumn>& PointColumns();

struct Label {
  std::string name;
  std::string value;
};

// Parses "name=value": name of [a-z0-9_], value any text.
Status ParseLabel(std::string_view text, Label* out);
// Label names must differ from each other.
Status ValidateLabels(const std::vector<Label>& labels);

// The names of a row's columns: the labels', then the measured columns'
// not named by a label.
std::vector<std::string> RowColumns(const std::vector<Label>& labels);

// One CSV field: quoted (RFC 4180) when it holds a comma, quote or newline.
std::string CsvField(std::string_view text);
std::string CsvHeader(const std::vector<Label>& labels);
std::string CsvRow(const std::vector<Label>& labels, const RowSource& source);

// `kvlab-load --schema`: {"format": kPointSchema, "columns": [{"name",
// "kind", "meaning", "cell_format"}, ...]}.
std::string SchemaJson();

}  // namespace kvlab::harness
