#include "engines/rules/geohash.h"

#include <cmath>

namespace kvlab {

namespace {

constexpr double kDegToRad = M_PI / 180.0;  // Redis's D_R
constexpr double kEarthRadiusMeters = 6372797.560856;
constexpr double kMercatorMax = 20037726.37;

double DegRad(double degrees) { return degrees * kDegToRad; }
double RadDeg(double radians) { return radians / kDegToRad; }

constexpr GeoRange kLongRange = {kGeoLongMin, kGeoLongMax};
constexpr GeoRange kLatRange = {kGeoLatMin, kGeoLatMax};

bool RangeIsZero(GeoRange range) { return range.max == 0 && range.min == 0; }

// The bits of x in the even positions, y's in the odd (interleave64()).
uint64_t Interleave64(uint32_t xlo, uint32_t ylo) {
  static constexpr uint64_t B[] = {0x5555555555555555ULL, 0x3333333333333333ULL,
                                   0x0F0F0F0F0F0F0F0FULL, 0x00FF00FF00FF00FFULL,
                                   0x0000FFFF0000FFFFULL};
  static constexpr unsigned S[] = {1, 2, 4, 8, 16};
  uint64_t x = xlo, y = ylo;
  for (int i = 4; i >= 0; --i) {
    x = (x | (x << S[i])) & B[i];
    y = (y | (y << S[i])) & B[i];
  }
  return x | (y << 1);
}

// deinterleave64(): even bits in the low word, odd bits in the high one.
uint64_t Deinterleave64(uint64_t interleaved) {
  static constexpr uint64_t B[] = {0x5555555555555555ULL, 0x3333333333333333ULL,
                                   0x0F0F0F0F0F0F0F0FULL, 0x00FF00FF00FF00FFULL,
                                   0x0000FFFF0000FFFFULL, 0x00000000FFFFFFFFULL};
  static constexpr unsigned S[] = {0, 1, 2, 4, 8, 16};
  uint64_t x = interleaved, y = interleaved >> 1;
  for (int i = 0; i < 6; ++i) {
    x = (x | (x >> S[i])) & B[i];
    y = (y | (y >> S[i])) & B[i];
  }
  return x | (y << 32);
}

bool Decode(GeoRange longitude, GeoRange latitude, GeoHashBits hash, GeoArea* area) {
  if (hash.IsZero() || RangeIsZero(latitude) || RangeIsZero(longitude)) return false;
  area->hash = hash;
  const uint64_t separated = Deinterleave64(hash.bits);  // [LAT][LONG]
  const double lat_scale = latitude.max - latitude.min;
  const double long_scale = longitude.max - longitude.min;
  const uint32_t ilato = static_cast<uint32_t>(separated);
  const uint32_t ilono = static_cast<uint32_t>(separated >> 32);
  const double cells = static_cast<double>(1ull << hash.step);
  area->latitude.min = latitude.min + (ilato * 1.0 / cells) * lat_scale;
  area->latitude.max = latitude.min + ((ilato + 1) * 1.0 / cells) * lat_scale;
  area->longitude.min = longitude.min + (ilono * 1.0 / cells) * long_scale;
  area->longitude.max = longitude.min + ((ilono + 1) * 1.0 / cells) * long_scale;
  return true;
}

// geohash_move_x() and geohash_move_y(): one cell along the axis whose bits
// `axis` marks (the odd bits, 0xaa..., longitude; the even, 0x55...,
// latitude), by adding (or subtracting) one with the other axis's bits
// filled so that the carry crosses them.
void MoveAlong(GeoHashBits* hash, int d, uint64_t axis) {
  if (d == 0) return;
  const uint64_t other = ~axis;
  uint64_t moving = hash->bits & axis;
  const uint64_t kept = hash->bits & other;
  const uint64_t zz = other >> (64 - hash->step * 2);
  if (d > 0) {
    moving = moving + (zz + 1);
  } else {
    moving = moving | zz;
    moving = moving - (zz + 1);
  }
  moving &= (axis >> (64 - hash->step * 2));
  hash->bits = moving | kept;
}

GeoHashBits Moved(GeoHashBits hash, int dx, int dy) {
  MoveAlong(&hash, dx, 0xaaaaaaaaaaaaaaaaULL);
  MoveAlong(&hash, dy, 0x5555555555555555ULL);
  return hash;
}

uint8_t EstimateStepsByRadius(double range_meters, double lat) {
  if (range_meters == 0) return 26;
  int step = 1;
  while (range_meters < kMercatorMax) {
    range_meters *= 2;
    step++;
  }
  step -= 2;  // make sure the range is included in most of the base cases
  // Wider towards the poles.
  if (lat > 66 || lat < -66) {
    step--;
    if (lat > 80 || lat < -80) step--;
  }
  if (step < 1) step = 1;
  if (step > 26) step = 26;
  return static_cast<uint8_t>(step);
}

// geohashBoundingBox(): min lon, min lat, max lon, max lat.
std::array<double, 4> BoundingBox(const GeoShape& shape) {
  const double longitude = shape.centre.longitude;
  const double latitude = shape.centre.latitude;
  const double height = shape.to_meters * (shape.circle ? shape.radius : shape.height / 2);
  const double width = shape.to_meters * (shape.circle ? shape.radius : shape.width / 2);
  const double lat_delta = RadDeg(height / kEarthRadiusMeters);
  const double long_delta_top =
      RadDeg(width / kEarthRadiusMeters / std::cos(DegRad(latitude + lat_delta)));
  const double long_delta_bottom =
      RadDeg(width / kEarthRadiusMeters / std::cos(DegRad(latitude - lat_delta)));
  // The hemispheres' directions are opposite: different corners bound them.
  const bool southern = latitude < 0;
  return {
      southern ? longitude - long_delta_bottom : longitude - long_delta_top, latitude - lat_delta,
      southern ? longitude + long_delta_bottom : longitude + long_delta_top, latitude + lat_delta};
}

double LatDistance(double lat1, double lat2) {
  return kEarthRadiusMeters * std::fabs(DegRad(lat2) - DegRad(lat1));
}

// C's (uint64_t) conversion of a double as GCC emits it on x86-64 (what
// redis-server's decodeGeohash() does to any score), made defined: below
// 2^63 a signed conversion, whose out-of-range answer is 2^63; from 2^63 on
// the same of score - 2^63, its top bit flipped. A sorted set may hold
// -inf or 1e300 when GEOPOS reads it.
uint64_t ScoreBits(double score) {
  constexpr double kTwo63 = 9223372036854775808.0;
  constexpr uint64_t kIndefinite = 0x8000000000000000ULL;
  auto signed_conversion = [&](double value) {
    if (!(value >= -kTwo63 && value < kTwo63)) return kIndefinite;
    return static_cast<uint64_t>(static_cast<int64_t>(value));
  };
  if (!(score >= kTwo63)) return signed_conversion(score);
  return signed_conversion(score - kTwo63) ^ kIndefinite;
}

}  // namespace

bool GeoPointValid(double longitude, double latitude) {
  return !(longitude < kGeoLongMin || longitude > kGeoLongMax || latitude < kGeoLatMin ||
           latitude > kGeoLatMax);
}

GeoHashBits GeoEncode(GeoRange longitude, GeoRange latitude, double lon, double lat, uint8_t step) {
  GeoHashBits hash;
  if (step > 32 || step == 0 || RangeIsZero(latitude) || RangeIsZero(longitude)) return hash;
  if (!GeoPointValid(lon, lat)) return hash;
  hash.step = step;
  if (lat < latitude.min || lat > latitude.max || lon < longitude.min || lon > longitude.max) {
    return hash;
  }
  double lat_offset = (lat - latitude.min) / (latitude.max - latitude.min);
  double long_offset = (lon - longitude.min) / (longitude.max - longitude.min);
  lat_offset *= static_cast<double>(1ULL << step);
  long_offset *= static_cast<double>(1ULL << step);
  hash.bits = Interleave64(static_cast<uint32_t>(lat_offset), static_cast<uint32_t>(long_offset));
  return hash;
}

GeoHashBits GeoEncodeWgs84(double longitude, double latitude, uint8_t step) {
  return GeoEncode(kLongRange, kLatRange, longitude, latitude, step);
}

uint64_t GeoAlign52Bits(GeoHashBits hash) { return hash.bits << (52 - hash.step * 2); }

uint64_t GeoScoreOf(double longitude, double latitude) {
  return GeoAlign52Bits(GeoEncodeWgs84(longitude, latitude, kGeoStepMax));
}

bool GeoDecodeScore(double score, GeoPoint* point) {
  GeoArea area;
  if (!Decode(kLongRange, kLatRange, {ScoreBits(score), kGeoStepMax}, &area)) return false;
  point->longitude = (area.longitude.min + area.longitude.max) / 2;
  if (point->longitude > kGeoLongMax) point->longitude = kGeoLongMax;
  if (point->longitude < kGeoLongMin) point->longitude = kGeoLongMin;
  point->latitude = (area.latitude.min + area.latitude.max) / 2;
  if (point->latitude > kGeoLatMax) point->latitude = kGeoLatMax;
  if (point->latitude < kGeoLatMin) point->latitude = kGeoLatMin;
  return true;
}

std::string GeoHashString(const GeoPoint& point) {
  static constexpr char kAlphabet[] = "0123456789bcdefghjkmnpqrstuvwxyz";
  const GeoHashBits hash =
      GeoEncode({-180, 180}, {-90, 90}, point.longitude, point.latitude, kGeoStepMax);
  std::string text(11, '0');
  for (int i = 0; i < 10; ++i) {
    text[i] = kAlphabet[(hash.bits >> (52 - ((i + 1) * 5))) & 0x1f];
  }
  return text;  // 52 bits: the 11th character is always the alphabet's first
}

double GeoDistance(double lon1, double lat1, double lon2, double lat2) {
  const double lon1r = DegRad(lon1);
  const double lon2r = DegRad(lon2);
  const double v = std::sin((lon2r - lon1r) / 2);
  // Practically the same longitude: the latitude distance alone.
  if (v == 0.0) return LatDistance(lat1, lat2);
  const double lat1r = DegRad(lat1);
  const double lat2r = DegRad(lat2);
  const double u = std::sin((lat2r - lat1r) / 2);
  const double a = u * u + std::cos(lat1r) * std::cos(lat2r) * v * v;
  return 2.0 * kEarthRadiusMeters * std::asin(std::sqrt(a));
}

bool GeoWithinShape(const GeoShape& shape, const GeoPoint& point, double* distance) {
  const double x1 = shape.centre.longitude, y1 = shape.centre.latitude;
  const double x2 = point.longitude, y2 = point.latitude;
  if (shape.circle) {
    *distance = GeoDistance(x1, y1, x2, y2);
    return *distance <= shape.radius * shape.to_meters;
  }
  // geohashGetDistanceIfInRectangle(): the cheaper latitude test first.
  const double width_m = shape.width * shape.to_meters;
  const double height_m = shape.height * shape.to_meters;
  if (LatDistance(y2, y1) > height_m / 2) return false;
  if (GeoDistance(x2, y2, x1, y2) > width_m / 2) return false;
  *distance = GeoDistance(x1, y1, x2, y2);
  return true;
}

std::array<GeoHashBits, 9> GeoSearchBoxes(const GeoShape& shape) {
  const std::array<double, 4> bounds = BoundingBox(shape);
  const double min_lon = bounds[0], min_lat = bounds[1], max_lon = bounds[2], max_lat = bounds[3];
  const double longitude = shape.centre.longitude, latitude = shape.centre.latitude;
  // A box's reach is measured from its centre to a corner.
  double radius_meters = shape.circle ? shape.radius
                                      : std::sqrt((shape.width / 2) * (shape.width / 2) +
                                                  (shape.height / 2) * (shape.height / 2));
  radius_meters *= shape.to_meters;
  uint8_t steps = EstimateStepsByRadius(radius_meters, latitude);

  GeoHashBits hash = GeoEncode(kLongRange, kLatRange, longitude, latitude, steps);
  GeoArea area;
  Decode(kLongRange, kLatRange, hash, &area);
  // Near a box's edge the estimated step may be too coarse for the
  // neighbours to cover the search: one step coarser then.
  {
    GeoArea north, south, east, west;
    Decode(kLongRange, kLatRange, Moved(hash, 0, 1), &north);
    Decode(kLongRange, kLatRange, Moved(hash, 0, -1), &south);
    Decode(kLongRange, kLatRange, Moved(hash, 1, 0), &east);
    Decode(kLongRange, kLatRange, Moved(hash, -1, 0), &west);
    const bool decrease = north.latitude.max < max_lat || south.latitude.min > min_lat ||
                          east.longitude.max < max_lon || west.longitude.min > min_lon;
    if (steps > 1 && decrease) {
      steps--;
      hash = GeoEncode(kLongRange, kLatRange, longitude, latitude, steps);
      Decode(kLongRange, kLatRange, hash, &area);
    }
  }
  std::array<GeoHashBits, 9> boxes = {
      hash,
      Moved(hash, 0, 1),    // north
      Moved(hash, 0, -1),   // south
      Moved(hash, 1, 0),    // east
      Moved(hash, -1, 0),   // west
      Moved(hash, 1, 1),    // north east
      Moved(hash, -1, 1),   // north west
      Moved(hash, 1, -1),   // south east
      Moved(hash, -1, -1),  // south west
  };
  enum { kCentre, kNorth, kSouth, kEast, kWest, kNorthEast, kNorthWest, kSouthEast, kSouthWest };
  // The boxes the search cannot reach.
  if (steps >= 2) {
    if (area.latitude.min < min_lat) {
      boxes[kSouth] = boxes[kSouthWest] = boxes[kSouthEast] = GeoHashBits{};
    }
    if (area.latitude.max > max_lat) {
      boxes[kNorth] = boxes[kNorthEast] = boxes[kNorthWest] = GeoHashBits{};
    }
    if (area.longitude.min < min_lon) {
      boxes[kWest] = boxes[kSouthWest] = boxes[kNorthWest] = GeoHashBits{};
    }
    if (area.longitude.max > max_lon) {
      boxes[kEast] = boxes[kSouthEast] = boxes[kNorthEast] = GeoHashBits{};
    }
  }
  return boxes;
}

void GeoBoxScores(GeoHashBits box, uint64_t* min, uint64_t* max) {
  *min = GeoAlign52Bits(box);
  box.bits++;
  *max = GeoAlign52Bits(box);
}

std::string GeoFormatDistance(double distance) {
  if (distance == 0) return "0.0000";
  const long long scaled = std::llrint(distance * 10000.0);
  const bool negative = scaled < 0;
  const unsigned long long value =
      negative ? static_cast<unsigned long long>(-(scaled + 1)) + 1 : scaled;
  std::string fraction = std::to_string(value % 10000);
  fraction.insert(0, 4 - fraction.size(), '0');
  return (negative ? "-" : "") + std::to_string(value / 10000) + "." + fraction;
}

}  // namespace kvlab
