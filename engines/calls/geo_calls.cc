#include "engines/calls/geo_calls.h"

#include <algorithm>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include "engines/calls/call_support.h"
#include "engines/calls/container_tables.h"
#include "engines/calls/zset_algebra.h"
#include "engines/containers/partial_quicksort.h"
#include "engines/containers/zset_text.h"
#include "engines/containers/zset_value.h"
#include "engines/rules/geohash.h"
#include "engines/rules/redis_float.h"
#include "engines/rules/redis_integer.h"

namespace kvlab {

namespace {

constexpr std::string_view kGeoadd = "geoadd";
constexpr std::string_view kGeopos = "geopos";
constexpr std::string_view kGeohash = "geohash";
constexpr std::string_view kGeodist = "geodist";
constexpr std::string_view kGeoradius = "georadius";
constexpr std::string_view kGeoradiusRo = "georadius_ro";
constexpr std::string_view kGeoradiusByMember = "georadiusbymember";
constexpr std::string_view kGeoradiusByMemberRo = "georadiusbymember_ro";
constexpr std::string_view kGeosearch = "geosearch";
constexpr std::string_view kGeosearchstore = "geosearchstore";

constexpr std::string_view kUnitError = "ERR unsupported unit provided. please use M, KM, FT, MI";
constexpr std::string_view kMemberError = "ERR could not decode requested zset member";

// An error's text, or none.
using Failure = std::optional<std::string>;

// extractLongLatOrReply().
Failure ParseLongLat(std::string_view lon, std::string_view lat, GeoPoint* point) {
  if (!ParseZSetScore(lon, &point->longitude) || !ParseZSetScore(lat, &point->latitude)) {
    return std::string(kContainerNotFloatError);
  }
  if (!GeoPointValid(point->longitude, point->latitude)) {
    char text[160];
    std::snprintf(text, sizeof text, "ERR invalid longitude,latitude pair %f,%f", point->longitude,
                  point->latitude);
    return std::string(text);
  }
  return std::nullopt;
}

// extractUnitOrReply(): meters per unit, or -1.
double MetersPer(std::string_view unit) {
  if (OptionIs(unit, "m")) return 1;
  if (OptionIs(unit, "km")) return 1000;
  if (OptionIs(unit, "ft")) return 0.3048;
  if (OptionIs(unit, "mi")) return 1609.34;
  return -1;
}

// extractDistanceOrReply().
Failure ParseDistance(std::string_view distance, std::string_view unit, double* radius,
                      double* to_meters) {
  if (!ParseZSetScore(distance, radius)) return std::string("ERR need numeric radius");
  if (*radius < 0) return std::string("ERR radius cannot be negative");
  *to_meters = MetersPer(unit);
  if (*to_meters < 0) return std::string(kUnitError);
  return std::nullopt;
}

// extractBoxOrReply().
Failure ParseBox(std::string_view width, std::string_view height, std::string_view unit,
                 GeoShape* shape) {
  if (!ParseZSetScore(width, &shape->width)) return std::string("ERR need numeric width");
  if (!ParseZSetScore(height, &shape->height)) return std::string("ERR need numeric height");
  if (shape->height < 0 || shape->width < 0) {
    return std::string("ERR height or width cannot be negative");
  }
  shape->to_meters = MetersPer(unit);
  if (shape->to_meters < 0) return std::string(kUnitError);
  return std::nullopt;
}

// longLatFromMember().
bool PointOfMember(const ZSetValue& zset, std::string_view member, GeoPoint* point) {
  const std::optional<double> score = zset.Score(member);
  return score && GeoDecodeScore(*score, point);
}

// GEOADD key [NX|XX] [CH] longitude latitude member [...]: ZADD of the
// points' scores (geoaddCommand() rewrites itself into ZADD).
void GeoAdd(ContainerCall& call) {
  bool nx = false, xx = false, ch = false;
  size_t first = 2;
  for (; first < call.args.size(); ++first) {
    if (OptionIs(call.args[first], "nx")) {
      nx = true;
    } else if (OptionIs(call.args[first], "xx")) {
      xx = true;
    } else if (OptionIs(call.args[first], "ch")) {
      ch = true;
    } else {
      break;
    }
  }
  const size_t left = call.args.size() - first;
  // ZADD's own check then refuses an empty list the same way.
  if (left % 3 != 0 || (xx && nx) || left == 0) return call.Error(kContainerSyntaxError);
  std::vector<std::pair<double, std::string_view>> points;
  for (size_t at = first; at < call.args.size(); at += 3) {
    GeoPoint point;
    if (Failure failure = ParseLongLat(call.args[at], call.args[at + 1], &point)) {
      return call.Error(*failure);
    }
    points.emplace_back(static_cast<double>(GeoScoreOf(point.longitude, point.latitude)),
                        call.args[at + 2]);
  }
  if (!call.CheckType()) return;
  int64_t added = 0, updated = 0;
  ZSetValue* zset = call.Find<ZSetValue>();
  if (zset == nullptr && !xx) zset = &call.FindOrCreate<ZSetValue>();
  for (size_t i = 0; zset != nullptr && i < points.size(); ++i) {
    const auto& [score, member] = points[i];
    if (const std::optional<double> current = zset->Score(member)) {
      if (nx) continue;
      if (score != *current) {
        zset->Update(member, score);
        ++updated;
      }
    } else {
      if (xx) continue;
      zset->Insert(member, score);
      ++added;
    }
  }
  if (added + updated != 0) call.Changed();
  call.Integer(ch ? added + updated : added);
}

// GEOPOS and GEOHASH: one reply per member, `missing` where it has no
// point (or the key none), else what `answer` writes of its point.
template <typename Answer>
void ReplyPerMember(ContainerCall& call, void (ReplyList::*missing)(), Answer&& answer) {
  if (!call.CheckType()) return;
  const ZSetValue* zset = call.Find<ZSetValue>();
  ReplyList& reply = call.List();
  reply.Array(call.args.size() - 2);
  for (size_t i = 2; i < call.args.size(); ++i) {
    GeoPoint point;
    if (zset == nullptr || !PointOfMember(*zset, call.args[i], &point)) {
      (reply.*missing)();
    } else {
      answer(point, reply);
    }
  }
}

void GeoPos(ContainerCall& call) {
  ReplyPerMember(call, &ReplyList::NilArray, [](const GeoPoint& point, ReplyList& reply) {
    reply.Array(2);
    reply.HumanDouble(FormatRedisLongDouble(point.longitude));
    reply.HumanDouble(FormatRedisLongDouble(point.latitude));
  });
}

void GeoHash(ContainerCall& call) {
  ReplyPerMember(call, &ReplyList::Nil,
                 [](const GeoPoint& point, ReplyList& reply) { reply.Bulk(GeoHashString(point)); });
}

// GEODIST key member1 member2 [M|KM|FT|MI]
void GeoDist(ContainerCall& call) {
  double to_meters = 1;
  if (call.args.size() == 5) {
    to_meters = MetersPer(call.args[4]);
    if (to_meters < 0) return call.Error(kUnitError);
  } else if (call.args.size() > 5) {
    return call.Error(kContainerSyntaxError);
  }
  if (!call.CheckType()) return;
  const ZSetValue* zset = call.Find<ZSetValue>();
  GeoPoint a, b;
  if (zset == nullptr || !PointOfMember(*zset, call.args[2], &a) ||
      !PointOfMember(*zset, call.args[3], &b)) {
    return call.Nil();
  }
  call.Bulk(
      GeoFormatDistance(GeoDistance(a.longitude, a.latitude, b.longitude, b.latitude) / to_meters));
}

// One point a search found.
struct Hit {
  GeoPoint point;
  double distance = 0;
  double score = 0;
  std::string member;
};

// What georadiusGeneric() parsed.
struct Search {
  GeoShape shape;
  bool with_dist = false, with_hash = false, with_coords = false;
  bool any = false;
  int sort = 0;  // 0 none, 1 ascending, 2 descending
  int64_t count = 0;
  bool store = false;
  bool store_dist = false;
};

// georadiusGeneric()'s parsing, in its order, with the source `zset`
// (nullptr: missing) at hand, as FROMMEMBER and BYMEMBER read it.
Failure ParseSearch(std::span<const std::string_view> args, int64_t flags, const ZSetValue* zset,
                    Search* search) {
  GeoShape& shape = search->shape;
  size_t base = 0;
  if (flags & kGeoFromCoords) {
    base = 6;
    shape.circle = true;
    if (Failure failure = ParseLongLat(args[2], args[3], &shape.centre)) return failure;
    if (Failure failure = ParseDistance(args[4], args[5], &shape.radius, &shape.to_meters)) {
      return failure;
    }
  } else if ((flags & kGeoFromMember) && zset == nullptr) {
    base = 5;  // parsed on, so that the reply says whether it would store
  } else if (flags & kGeoFromMember) {
    base = 5;
    shape.circle = true;
    if (!PointOfMember(*zset, args[2], &shape.centre)) return std::string(kMemberError);
    if (Failure failure = ParseDistance(args[3], args[4], &shape.radius, &shape.to_meters)) {
      return failure;
    }
  } else {
    base = 2;
    if (flags & kGeoSearchStore) {
      base = 3;
      search->store = true;
    }
  }
  bool from_member = false, from_location = false, by_radius = false, by_box = false;
  const bool geosearch = (flags & kGeoSearch) != 0;
  const bool may_store = !(flags & kGeoNoStore) && !geosearch;
  const size_t remaining = args.size() > base ? args.size() - base : 0;
  for (size_t i = 0; i < remaining; ++i) {
    const std::string_view arg = args[base + i];
    if (OptionIs(arg, "withdist")) {
      search->with_dist = true;
    } else if (OptionIs(arg, "withhash")) {
      search->with_hash = true;
    } else if (OptionIs(arg, "withcoord")) {
      search->with_coords = true;
    } else if (OptionIs(arg, "any")) {
      search->any = true;
    } else if (OptionIs(arg, "asc")) {
      search->sort = 1;
    } else if (OptionIs(arg, "desc")) {
      search->sort = 2;
    } else if (OptionIs(arg, "count") && i + 1 < remaining) {
      const std::optional<int64_t> count = ParseRedisInt64(args[base + i + 1]);
      if (!count) return std::string(kContainerNotIntegerError);
      if (*count <= 0) return std::string("ERR COUNT must be > 0");
      search->count = *count;
      ++i;
    } else if (OptionIs(arg, "store") && i + 1 < remaining && may_store) {
      search->store = true;
      search->store_dist = false;
      ++i;
    } else if (OptionIs(arg, "storedist") && i + 1 < remaining && may_store) {
      search->store = true;
      search->store_dist = true;
      ++i;
    } else if (OptionIs(arg, "storedist") && geosearch && (flags & kGeoSearchStore)) {
      search->store_dist = true;
    } else if (OptionIs(arg, "frommember") && i + 1 < remaining && geosearch && !from_location) {
      if (zset != nullptr && !PointOfMember(*zset, args[base + i + 1], &shape.centre)) {
        return std::string(kMemberError);
      }
      from_member = true;
      ++i;
    } else if (OptionIs(arg, "fromlonlat") && i + 2 < remaining && geosearch && !from_member) {
      if (Failure failure = ParseLongLat(args[base + i + 1], args[base + i + 2], &shape.centre)) {
        return failure;
      }
      from_location = true;
      i += 2;
    } else if (OptionIs(arg, "byradius") && i + 2 < remaining && geosearch && !by_box) {
      if (Failure failure = ParseDistance(args[base + i + 1], args[base + i + 2], &shape.radius,
                                          &shape.to_meters)) {
        return failure;
      }
      shape.circle = true;
      by_radius = true;
      i += 2;
    } else if (OptionIs(arg, "bybox") && i + 3 < remaining && geosearch && !by_radius) {
      if (Failure failure =
              ParseBox(args[base + i + 1], args[base + i + 2], args[base + i + 3], &shape)) {
        return failure;
      }
      shape.circle = false;
      by_box = true;
      i += 3;
    } else {
      return std::string(kContainerSyntaxError);
    }
  }
  if (search->store && (search->with_dist || search->with_hash || search->with_coords)) {
    return std::string("ERR ") +
           ((flags & kGeoSearchStore) ? "GEOSEARCHSTORE" : "STORE option in GEORADIUS") +
           " is not compatible with WITHDIST, WITHHASH and WITHCOORD options";
  }
  if (geosearch && !(from_member || from_location)) {
    return "ERR exactly one of FROMMEMBER or FROMLONLAT can be specified for " +
           std::string(args[0]);
  }
  if (geosearch && !(by_radius || by_box)) {
    return "ERR exactly one of BYRADIUS and BYBOX can be specified for " + std::string(args[0]);
  }
  if (search->any && search->count == 0) {
    return std::string("ERR the ANY argument requires COUNT argument");
  }
  return std::nullopt;
}

// membersOfAllNeighbors(): the points of each box in the shape, box after
// box, each box in score order; with `limit` (ANY), stops once it has that
// many.
std::vector<Hit> FindPoints(const ZSetValue& zset, const GeoShape& shape, size_t limit) {
  const std::array<GeoHashBits, 9> boxes = GeoSearchBoxes(shape);
  std::vector<Hit> hits;
  size_t last_processed = 0;
  for (size_t i = 0; i < boxes.size(); ++i) {
    if (boxes[i].IsZero()) continue;
    // With a huge radius neighbours may be the same box: read it once.
    if (last_processed && boxes[i].bits == boxes[last_processed].bits &&
        boxes[i].step == boxes[last_processed].step) {
      continue;
    }
    if (!hits.empty() && limit && hits.size() >= limit) break;
    uint64_t min, max;
    GeoBoxScores(boxes[i], &min, &max);
    const double low = static_cast<double>(min), high = static_cast<double>(max);
    const size_t first = zset.CountBelow(low, false);  // min <= score < max
    if (first < zset.Size()) {
      zset.Walk(first, false, [&](std::string_view member, double score) {
        if (!(score < high)) return false;
        Hit hit;
        if (GeoDecodeScore(score, &hit.point) && GeoWithinShape(shape, hit.point, &hit.distance)) {
          hit.score = score;
          hit.member = std::string(member);
          hits.push_back(std::move(hit));
        }
        return !(limit && hits.size() >= limit);
      });
    }
    last_processed = i;
  }
  return hits;
}

// The search's hits, sorted and counted as Redis does: qsort (glibc's is
// a stable merge sort) when every hit is returned, pqsort when COUNT cuts.
std::vector<Hit> SortedHits(std::vector<Hit> hits, Search& search, size_t* returned) {
  if (search.count != 0 && search.sort == 0 && !search.any) search.sort = 1;
  const size_t found = hits.size();
  *returned = search.count == 0 || found < static_cast<size_t>(search.count)
                  ? found
                  : static_cast<size_t>(search.count);
  if (search.sort != 0 && found > 0) {
    const bool ascending = search.sort == 1;
    auto compare = [ascending](const Hit& a, const Hit& b) {
      const int order = a.distance > b.distance ? 1 : (a.distance == b.distance ? 0 : -1);
      return ascending ? order : -order;
    };
    if (*returned == found) {
      std::stable_sort(hits.begin(), hits.end(),
                       [&](const Hit& a, const Hit& b) { return compare(a, b) < 0; });
    } else {
      PartialQuicksort(hits, 0, *returned - 1, compare);
    }
  }
  return hits;
}

// The search and its reply, for the forms that do not store.
void RunSearch(ContainerCall& call, int64_t flags) {
  if (!call.CheckType()) return;
  const ZSetValue* zset = call.Find<ZSetValue>();
  Search search;
  if (Failure failure = ParseSearch(call.args, flags, zset, &search)) return call.Error(*failure);
  if (zset == nullptr) {
    call.List().Array(0);
    return;
  }
  std::vector<Hit> hits = FindPoints(*zset, search.shape, search.any ? search.count : 0);
  size_t returned = 0;
  hits = SortedHits(std::move(hits), search, &returned);
  ReplyList& reply = call.List();
  const size_t options = search.with_dist + search.with_coords + search.with_hash;
  reply.Array(returned);
  for (size_t i = 0; i < returned; ++i) {
    const Hit& hit = hits[i];
    if (options) reply.Array(options + 1);
    reply.Bulk(hit.member);
    if (search.with_dist) reply.Bulk(GeoFormatDistance(hit.distance / search.shape.to_meters));
    if (search.with_hash) reply.Integer(static_cast<int64_t>(hit.score));
    if (search.with_coords) {
      reply.Array(2);
      reply.HumanDouble(FormatRedisLongDouble(hit.point.longitude));
      reply.HumanDouble(FormatRedisLongDouble(hit.point.latitude));
    }
  }
}

void GeoRadius(ContainerCall& call) { RunSearch(call, kGeoFromCoords); }
void GeoRadiusRo(ContainerCall& call) { RunSearch(call, kGeoFromCoords | kGeoNoStore); }
void GeoRadiusByMember(ContainerCall& call) { RunSearch(call, kGeoFromMember); }
void GeoRadiusByMemberRo(ContainerCall& call) { RunSearch(call, kGeoFromMember | kGeoNoStore); }
void GeoSearch(ContainerCall& call) { RunSearch(call, kGeoSearch); }

constexpr uint8_t kGeoRead = kContainerInternal;
constexpr uint8_t kGeoWrite = kContainerInternal | kContainerWrite | kContainerDenyOom;
constexpr ValueType kGeoType = ValueType::kZSet;

const ContainerCommand kGeoCommands[] = {
    {kGeoadd, -5, kGeoType, kGeoWrite, GeoAdd},
    {kGeopos, -2, kGeoType, kGeoRead, GeoPos},
    {kGeohash, -2, kGeoType, kGeoRead, GeoHash},
    {kGeodist, -4, kGeoType, kGeoRead, GeoDist},
    {kGeoradius, -6, kGeoType, kGeoRead, GeoRadius},
    {kGeoradiusRo, -6, kGeoType, kGeoRead, GeoRadiusRo},
    {kGeoradiusByMember, -5, kGeoType, kGeoRead, GeoRadiusByMember},
    {kGeoradiusByMemberRo, -5, kGeoType, kGeoRead, GeoRadiusByMemberRo},
    {kGeosearch, -7, kGeoType, kGeoRead, GeoSearch},
};

}  // namespace

int64_t GeoSearchFlagsOf(std::string_view name) {
  if (name == kGeoradius) return kGeoFromCoords;
  if (name == kGeoradiusRo) return kGeoFromCoords | kGeoNoStore;
  if (name == kGeoradiusByMember) return kGeoFromMember;
  if (name == kGeoradiusByMemberRo) return kGeoFromMember | kGeoNoStore;
  if (name == kGeosearch) return kGeoSearch;
  if (name == kGeosearchstore) return kGeoSearch | kGeoSearchStore;
  return 0;
}

std::optional<size_t> GeoStoreKeyIndex(std::span<const std::string_view> args, int64_t flags) {
  if (flags & kGeoSearchStore) return 1;
  if ((flags & kGeoNoStore) || (flags & kGeoSearch)) return std::nullopt;
  const size_t base = (flags & kGeoFromCoords) ? 6 : 5;
  if (args.size() <= base) return std::nullopt;
  // The option loop's steps (ParseSearch), without reading the values: an
  // error in one is answered by the search step itself.
  std::optional<size_t> store;
  const size_t remaining = args.size() - base;
  for (size_t i = 0; i < remaining; ++i) {
    const std::string_view arg = args[base + i];
    if (OptionIs(arg, "withdist") || OptionIs(arg, "withhash") || OptionIs(arg, "withcoord") ||
        OptionIs(arg, "any") || OptionIs(arg, "asc") || OptionIs(arg, "desc")) {
      continue;
    }
    if (OptionIs(arg, "count") && i + 1 < remaining) {
      ++i;
    } else if ((OptionIs(arg, "store") || OptionIs(arg, "storedist")) && i + 1 < remaining) {
      store = base + i + 1;
      ++i;
    } else {
      break;  // a syntax error: the search answers it
    }
  }
  return store;
}

OpResult ReadGeoStore(const Operation& op, KeyReader& keys, GroupState& group) {
  const std::span<const std::string_view> args = op.container_args();
  const std::optional<EntryView> live = keys.Live(op.key);
  if (live && (live->container == nullptr || live->container->type() != ValueType::kZSet)) {
    return OpResult::Error(EngineError::kWrongType);
  }
  const auto* zset = live ? static_cast<const ZSetValue*>(live->container) : nullptr;
  Search search;
  if (Failure failure = ParseSearch(args, op.integer, zset, &search)) {
    return OpResult::ErrorText(*failure);
  }
  std::vector<std::pair<std::string, double>> members;
  if (zset != nullptr) {
    std::vector<Hit> hits = FindPoints(*zset, search.shape, search.any ? search.count : 0);
    size_t returned = 0;
    hits = SortedHits(std::move(hits), search, &returned);
    for (size_t i = 0; i < returned; ++i) {
      members.emplace_back(
          std::move(hits[i].member),
          search.store_dist ? hits[i].distance / search.shape.to_meters : hits[i].score);
    }
  }
  return CarryZSetForStore(members, group);
}

std::span<const ContainerCommand> GeoCommands() { return kGeoCommands; }

}  // namespace kvlab
