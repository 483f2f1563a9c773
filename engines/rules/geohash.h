// Redis 7.0's geohash arithmetic (src/geohash.c, src/geohash_helper.c, the
// number rules of src/geo.c), step for step, so that the GEO commands score,
// find and measure points exactly as redis-server does: a point's sorted-set
// score is its 52-bit interleaved geohash (26 steps of longitude and
// latitude over [-180, 180] x [-85.05112878, 85.05112878]); a search covers
// the geohash box of the centre at a step estimated from the radius, and its
// eight neighbours; distances are haversine on a sphere of 6,372,797.560856 m.
//
// Pure functions; thread-safe.
#pragma once

#include <array>
#include <cstdint>
#include <string>

namespace kvlab {

inline constexpr double kGeoLongMin = -180;
inline constexpr double kGeoLongMax = 180;
inline constexpr double kGeoLatMin = -85.05112878;
inline constexpr double kGeoLatMax = 85.05112878;
inline constexpr int kGeoStepMax = 26;  // 52 bits

struct GeoHashBits {
  uint64_t bits = 0;
  uint8_t step = 0;
  bool IsZero() const { return bits == 0 && step == 0; }
};

struct GeoRange {
  double min = 0;
  double max = 0;
};

struct GeoArea {
  GeoHashBits hash;
  GeoRange longitude;
  GeoRange latitude;
};

// A point: longitude, latitude.
struct GeoPoint {
  double longitude = 0;
  double latitude = 0;
};

// What a search covers: a circle (radius) or a box (width x height),
// centred on `centre`, its sizes in the unit `to_meters` converts.
struct GeoShape {
  bool circle = true;
  GeoPoint centre;
  double radius = 0;
  double width = 0;
  double height = 0;
  double to_meters = 1;
};

// Whether a point may be indexed (GEOADD's range check).
bool GeoPointValid(double longitude, double latitude);

// geohashEncode() over the given ranges; a zero hash when out of range.
GeoHashBits GeoEncode(GeoRange longitude, GeoRange latitude, double lon, double lat, uint8_t step);
// geohashEncodeWGS84(): over kvlab's (Redis's) ranges.
GeoHashBits GeoEncodeWgs84(double longitude, double latitude, uint8_t step);
// The sorted-set score of a point (geohashAlign52Bits of the 26-step hash).
uint64_t GeoScoreOf(double longitude, double latitude);
// A hash shifted to 52 bits.
uint64_t GeoAlign52Bits(GeoHashBits hash);
// decodeGeohash(): the centre of the score's box; false for a score that is
// not one (its box cannot be decoded).
bool GeoDecodeScore(double score, GeoPoint* point);

// GEOHASH's 11 characters: the point re-encoded over the standard
// [-180, 180] x [-90, 90], in the geohash alphabet, the 11th always '0'.
std::string GeoHashString(const GeoPoint& point);

// Haversine distance in meters (geohashGetDistance()).
double GeoDistance(double lon1, double lat1, double lon2, double lat2);
// Whether `point` lies in the shape; its distance from the centre then.
bool GeoWithinShape(const GeoShape& shape, const GeoPoint& point, double* distance);

// The nine boxes a search reads, centre first then N S E W NE NW SE SW
// (geohashCalculateAreasByShapeWGS84()); a box not needed is zero.
std::array<GeoHashBits, 9> GeoSearchBoxes(const GeoShape& shape);
// A box's score range: [min, max).
void GeoBoxScores(GeoHashBits box, uint64_t* min, uint64_t* max);

// addReplyDoubleDistance(): fixed point with 4 decimals (llrint of d * 10^4).
std::string GeoFormatDistance(double distance);

}  // namespace kvlab
