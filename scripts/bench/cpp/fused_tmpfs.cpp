// How far the host space's staging copies keep a split job on a memory-backed
// file system from the storage's own rate (target: split / `dd` pair <= 1.4;
// 2.95 in host space on the H200 node on 2026-12-02, 7abb514). Each variant
// moves the same bytes, a raw input file of float64 in `dir` multiplied by a
// resident multBy row and written to one part file per thread (the split
// layout: one writer per part), on T threads at once:
//   pair     T threads read the input into a 1 MiB buffer each while T more
//            write 1 MiB buffers to the parts: no multiply, the `dd` pair's work;
//   staged   as the pipeline runs today: each thread reads a whole slab into
//            its staging buffer, multiplies it in place, writes it out;
//   hooked   the multiply done on each 1 MiB piece right after its read,
//            while it is in cache, then the slab written from the staging buffer;
//   fused    read, multiply and write 1 MiB at a time through a buffer that
//            stays in cache: no staging buffer at all.
// The parts are removed before every run, so each run allocates its pages as a
// job's output does. Medians of `rounds` runs; every variant but `pair` is
// checked against a plain product on a sample of elements.
//   g++ -O3 -pthread scripts/bench/cpp/fused_tmpfs.cpp -o /tmp/fused_tmpfs
//   /tmp/fused_tmpfs [dir=/dev/shm/discount_fused] [GB=2] [threads=nproc] [slab MiB=64] [rounds=5]
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <vector>

namespace {

using I = std::int64_t;
constexpr I kPiece = I{1} << 20;  // bytes per read/write call
constexpr I kPlane = 250000 * 5;  // multBy elements (one date's plane)

std::string dir;
I total = 0, slab = 0;
int threads = 0;
std::vector<double> mult;

void die(const char* what) {
  std::perror(what);
  std::exit(1);
}

void pread_all(int fd, char* p, I n, I at) {
  while (n > 0) {
    const ssize_t r = ::pread(fd, p, static_cast<size_t>(n), at);
    if (r <= 0) die("pread");
    p += r, n -= r, at += r;
  }
}

void pwrite_all(int fd, const char* p, I n, I at) {
  while (n > 0) {
    const ssize_t r = ::pwrite(fd, p, static_cast<size_t>(n), at);
    if (r <= 0) die("pwrite");
    p += r, n -= r, at += r;
  }
}

// d[k] = mult[(first + k) % kPlane] * s[k] for k < n.
void multiply(const double* s, double* d, I first, I n) {
  I k = 0;
  while (k < n) {
    const I m0 = (first + k) % kPlane, len = std::min(n - k, kPlane - m0);
    const double* m = mult.data() + m0;
    for (I j = 0; j < len; ++j) d[k + j] = m[j] * s[k + j];
    k += len;
  }
}

std::string part(int t) { return dir + "/part-" + std::to_string(t) + ".raw"; }

// Thread t's slabs: t, t + T, ...; slab i goes to part t at offset (i / T) * slab.
template <class Body>
double run_threads(int n, Body body) {
  for (int t = 0; t < threads; ++t) ::unlink(part(t).c_str());
  const auto t0 = std::chrono::steady_clock::now();
  std::vector<std::thread> pool;
  for (int t = 0; t < n; ++t) pool.emplace_back(body, t);
  for (auto& th : pool) th.join();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

double pair_run() {
  return run_threads(2 * threads, [](int t) {
    std::vector<char> buffer(kPiece, 1);
    const int me = t % threads;
    const I share = total / threads, begin = me * share, end = me + 1 == threads ? total : begin + share;
    if (t < threads) {
      const int in = ::open((dir + "/in.raw").c_str(), O_RDONLY);
      for (I at = begin; at < end; at += kPiece) pread_all(in, buffer.data(), std::min(kPiece, end - at), at);
      ::close(in);
    } else {
      const int out = ::open(part(me).c_str(), O_WRONLY | O_CREAT, 0644);
      for (I at = begin; at < end; at += kPiece) pwrite_all(out, buffer.data(), std::min(kPiece, end - at), at - begin);
      ::close(out);
    }
  });
}

enum class Kind { staged, hooked, fused };

double slab_run(Kind kind) {
  return run_threads(threads, [kind](int t) {
    const int in = ::open((dir + "/in.raw").c_str(), O_RDONLY);
    const int out = ::open(part(t).c_str(), O_WRONLY | O_CREAT, 0644);
    std::vector<double> staging(kind == Kind::fused ? kPiece / 8 : slab / 8);
    char* buf = reinterpret_cast<char*>(staging.data());
    const I slabs = (total + slab - 1) / slab;
    for (I i = t; i < slabs; i += threads) {
      const I at = i * slab, n = std::min(slab, total - at), to = (i / threads) * slab;
      if (kind == Kind::fused) {
        for (I p = 0; p < n; p += kPiece) {
          const I len = std::min(kPiece, n - p);
          pread_all(in, buf, len, at + p);
          multiply(staging.data(), staging.data(), (at + p) / 8, len / 8);
          pwrite_all(out, buf, len, to + p);
        }
        continue;
      }
      for (I p = 0; p < n; p += kPiece) {
        const I len = std::min(kPiece, n - p);
        pread_all(in, buf + p, len, at + p);
        if (kind == Kind::hooked) multiply(staging.data() + p / 8, staging.data() + p / 8, (at + p) / 8, len / 8);
      }
      if (kind == Kind::staged) multiply(staging.data(), staging.data(), at / 8, n / 8);
      for (I p = 0; p < n; p += kPiece) pwrite_all(out, buf + p, std::min(kPiece, n - p), to + p);
    }
    ::close(in);
    ::close(out);
  });
}

// A sample of elements of the parts against mult * input.
bool check() {
  const int in = ::open((dir + "/in.raw").c_str(), O_RDONLY);
  std::mt19937_64 rng(5);
  bool ok = true;
  for (int s = 0; s < 2000 && ok; ++s) {
    const I e = static_cast<I>(rng() % static_cast<std::uint64_t>(total / 8)), at = e * 8, i = at / slab;
    const int out = ::open(part(static_cast<int>(i % threads)).c_str(), O_RDONLY);
    double x = 0, y = 0;
    pread_all(in, reinterpret_cast<char*>(&x), 8, at);
    pread_all(out, reinterpret_cast<char*>(&y), 8, (i / threads) * slab + at % slab);
    ::close(out);
    ok = y == mult[static_cast<std::size_t>(e % kPlane)] * x;
  }
  ::close(in);
  return ok;
}

}  // namespace

int main(int argc, char** argv) {
  dir = argc > 1 ? argv[1] : "/dev/shm/discount_fused";
  const double gb = argc > 2 ? std::atof(argv[2]) : 2.0;
  threads = argc > 3 ? std::atoi(argv[3]) : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  slab = (argc > 4 ? std::atoll(argv[4]) : 64) << 20;
  const int rounds = argc > 5 ? std::atoi(argv[5]) : 5;
  total = static_cast<I>(gb * 1e9) / kPiece * kPiece;
  ::mkdir(dir.c_str(), 0755);
  mult.resize(kPlane);
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> value(0.5, 2.0);
  for (auto& m : mult) m = value(rng);
  {  // the input, written once
    const int f = ::open((dir + "/in.raw").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    std::vector<double> piece(kPiece / 8);
    for (I at = 0; at < total; at += kPiece) {
      for (auto& v : piece) v = value(rng);
      pwrite_all(f, reinterpret_cast<const char*>(piece.data()), kPiece, at);
    }
    ::close(f);
  }
  std::printf("%s: %.2f GB in and out, %d threads, %d parts, %lld MiB slabs, 1 MiB pieces, median of %d\n", dir.c_str(),
              total / 1e9, threads, threads, static_cast<long long>(slab >> 20), rounds);
  const char* names[] = {"pair", "staged", "hooked", "fused"};
  std::vector<std::vector<double>> times(4);
  for (int r = 0; r < rounds; ++r) {  // interleaved, so drift touches every variant alike
    times[0].push_back(pair_run());
    for (int v = 1; v < 4; ++v) {
      times[v].push_back(slab_run(static_cast<Kind>(v - 1)));
      if (r == 0 && !check()) {
        std::printf("%s: WRONG result\n", names[v]);
        return 1;
      }
    }
  }
  double pair = 0;
  std::printf("variant   median s   GB/s in+out   / pair\n");
  for (int v = 0; v < 4; ++v) {
    std::sort(times[v].begin(), times[v].end());
    const double med = times[v][times[v].size() / 2];
    if (v == 0) pair = med;
    std::printf("%-8s %9.3f %13.2f %8.2f\n", names[v], med, 2 * total / 1e9 / med, med / pair);
  }
  for (int t = 0; t < threads; ++t) ::unlink(part(t).c_str());
  ::unlink((dir + "/in.raw").c_str());
  ::rmdir(dir.c_str());
  return 0;
}
