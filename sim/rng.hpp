// Random streams. Every entity of a model draws from its own stream, derived from
// (scenario seed, replication, entity name) alone, so adding a consumer or changing its settings
// never shifts the numbers another entity sees: common random numbers across a sweep.
//
// Generator: xoshiro256++ (Blackman & Vigna), seeded through SplitMix64 as its authors advise.
// Sampling is our own code (no <random> distributions), so the numbers are the same with every
// standard library.
#pragma once

#include <cmath>
#include <cstdint>
#include <string_view>

namespace sim {

inline std::uint64_t splitmix64(std::uint64_t& state) {
  std::uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

// FNV-1a: a stable hash of an entity's name (std::hash is not stable across libraries).
inline constexpr std::uint64_t fnv1a(std::string_view s) {
  std::uint64_t h = 0xcbf29ce484222325ULL;
  for (unsigned char c : s) {
    h ^= c;
    h *= 0x100000001b3ULL;
  }
  return h;
}

class Rng {
 public:
  Rng() : Rng(0, 0, "") {}
  Rng(std::uint64_t seed, std::uint64_t replication, std::string_view entity) {
    std::uint64_t sm = seed;
    std::uint64_t a = splitmix64(sm);
    sm = a ^ (replication * 0xd1b54a32d192ed03ULL);
    std::uint64_t b = splitmix64(sm);
    sm = b ^ fnv1a(entity);
    for (auto& w : s_) w = splitmix64(sm);
  }

  std::uint64_t next() {
    const std::uint64_t result = rotl(s_[0] + s_[3], 23) + s_[0];
    const std::uint64_t t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = rotl(s_[3], 45);
    return result;
  }

  // Uniform on [0, 1), 53 random bits.
  double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }
  // Uniform on (0, 1]: safe under log().
  double uniform_pos() { return static_cast<double>((next() >> 11) + 1) * 0x1.0p-53; }
  // Uniform integer in [0, n), by Lemire's multiply-shift (bias below 2^-64 * n, negligible).
  std::uint64_t below(std::uint64_t n) {
    __extension__ using u128 = unsigned __int128;
    return static_cast<std::uint64_t>((static_cast<u128>(next()) * n) >> 64);
  }
  bool bernoulli(double p) { return uniform() < p; }

  double exponential(double mean) { return -mean * std::log(uniform_pos()); }

  // Marsaglia's polar method; the second variate is cached so each pair costs one rejection loop.
  double standard_normal() {
    if (has_spare_) {
      has_spare_ = false;
      return spare_;
    }
    double u, v, s;
    do {
      u = 2.0 * uniform() - 1.0;
      v = 2.0 * uniform() - 1.0;
      s = u * u + v * v;
    } while (s >= 1.0 || s == 0.0);
    const double f = std::sqrt(-2.0 * std::log(s) / s);
    spare_ = v * f;
    has_spare_ = true;
    return u * f;
  }

 private:
  static std::uint64_t rotl(std::uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  std::uint64_t s_[4];
  double spare_ = 0.0;
  bool has_spare_ = false;
};

}  // namespace sim
