// Known answers for the geohash arithmetic (engines/rules/geohash.h), taken
// from redis-server 7.0.15: the scores, geohash strings, decoded positions
// and distances of Palermo and Catania (Redis's own documentation example);
// then the boxes a search reads, the distance formatting and the defined
// decoding of scores that are no geohash.
#include "engines/rules/geohash.h"

#include <cmath>
#include <string>

#include <gtest/gtest.h>

#include "engines/rules/redis_float.h"

namespace kvlab {
namespace {

TEST(Geohash, ScoresAndStringsAreRedis) {
  // GEOADD s 13.361389 38.115556 Palermo 15.087269 37.502669 Catania;
  // ZSCORE; GEOHASH.
  EXPECT_EQ(GeoScoreOf(13.361389, 38.115556), 3479099956230698ull);
  EXPECT_EQ(GeoScoreOf(15.087269, 37.502669), 3479447370796909ull);
  GeoPoint palermo, catania;
  ASSERT_TRUE(GeoDecodeScore(3479099956230698.0, &palermo));
  ASSERT_TRUE(GeoDecodeScore(3479447370796909.0, &catania));
  EXPECT_EQ(GeoHashString(palermo), "sqc8b49rny0");
  EXPECT_EQ(GeoHashString(catania), "sqdtr74hyu0");
  // GEOPOS s Palermo
  EXPECT_EQ(FormatRedisLongDouble(palermo.longitude), "13.36138933897018433");
  EXPECT_EQ(FormatRedisLongDouble(palermo.latitude), "38.11555639549629859");
  // GEODIST s Palermo Catania [km]
  const double meters =
      GeoDistance(palermo.longitude, palermo.latitude, catania.longitude, catania.latitude);
  EXPECT_EQ(GeoFormatDistance(meters), "166274.1516");
  EXPECT_EQ(GeoFormatDistance(meters / 1000), "166.2742");
}

TEST(Geohash, TheRangeIsRedis) {
  EXPECT_TRUE(GeoPointValid(-180, -85.05112878));
  EXPECT_TRUE(GeoPointValid(180, 85.05112878));
  EXPECT_FALSE(GeoPointValid(180.0001, 0));
  EXPECT_FALSE(GeoPointValid(0, 85.06));
  EXPECT_TRUE(GeoEncodeWgs84(0, 86, 26).bits == 0);  // out of range: no hash
}

TEST(Geohash, ASearchReadsItsBoxAndTheNeighboursThatReach) {
  GeoShape shape;
  shape.centre = {15, 37};
  shape.radius = 200;
  shape.to_meters = 1000;
  const auto boxes = GeoSearchBoxes(shape);
  ASSERT_FALSE(boxes[0].IsZero());
  // The centre's box holds the centre.
  uint64_t min, max;
  GeoBoxScores(boxes[0], &min, &max);
  const uint64_t centre = GeoScoreOf(15, 37);
  EXPECT_LE(min, centre);
  EXPECT_LT(centre, max);
  // Every point within the radius lies in one of the boxes read.
  for (double dlon = -2.2; dlon <= 2.2; dlon += 0.1) {
    for (double dlat = -1.8; dlat <= 1.8; dlat += 0.1) {
      const GeoPoint point = {15 + dlon, 37 + dlat};
      double distance;
      if (!GeoWithinShape(shape, point, &distance)) continue;
      const uint64_t score = GeoScoreOf(point.longitude, point.latitude);
      bool covered = false;
      for (const GeoHashBits& box : boxes) {
        if (box.IsZero()) continue;
        GeoBoxScores(box, &min, &max);
        covered |= min <= score && score < max;
      }
      EXPECT_TRUE(covered) << point.longitude << "," << point.latitude;
    }
  }
}

TEST(Geohash, DistancesFormatAsFixedPointWithFourDecimals) {
  EXPECT_EQ(GeoFormatDistance(0), "0.0000");
  EXPECT_EQ(GeoFormatDistance(0.00005), "0.0000");  // llrint: to even
  EXPECT_EQ(GeoFormatDistance(1.23456), "1.2346");
  EXPECT_EQ(GeoFormatDistance(9.81824), "9.8182");
  EXPECT_EQ(GeoFormatDistance(12345678.9), "12345678.9000");
}

TEST(Geohash, ScoresThatAreNoGeohashDecodeDefinedly) {
  GeoPoint point;
  // What redis-server answers for ZADD scores -inf, 1e300, -5 under GEOPOS.
  for (double score : {-HUGE_VAL, 1e300, -5.0, HUGE_VAL}) {
    ASSERT_TRUE(GeoDecodeScore(score, &point));
    EXPECT_TRUE(GeoPointValid(point.longitude, point.latitude));
  }
}

}  // namespace
}  // namespace kvlab
