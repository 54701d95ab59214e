// Exploration program behind micro_columns.log (docs/performance.md, host slicings): loop shapes of the host
// kernel without Kokkos, interleaved rounds, median and fastest run. Kept as the log's source, not built.
// g++ -O3 -fopenmp -march=x86-64 host_loops_micro.cpp && OMP_NUM_THREADS=2 OMP_PROC_BIND=spread OMP_PLACES=cores ./a.out 7
#include <omp.h>
#include <emmintrin.h>
#include <immintrin.h>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <cstdlib>
#include <vector>
#include <algorithm>
#include <functional>
#include <string>
using namespace std;
const long D=100, P=1250000, N=D*P;
double *in_, *out_, *m_;
static inline void run_sse(const double* m, const double* s, double* d, long len, bool nt){
  long k=0;
  if(nt) for(;k<len && ((uintptr_t)(d+k))%16;++k) d[k]=m[k]*s[k];
  if(nt) for(;k+2<=len;k+=2) _mm_stream_pd(d+k,_mm_mul_pd(_mm_loadu_pd(m+k),_mm_loadu_pd(s+k)));
  else for(;k+2<=len;k+=2) _mm_storeu_pd(d+k,_mm_mul_pd(_mm_loadu_pd(m+k),_mm_loadu_pd(s+k)));
  for(;k<len;++k) d[k]=m[k]*s[k];
}
static inline void run_sse4(const double* m, const double* s, double* d, long len, bool nt){
  long k=0;
  for(;k<len && ((uintptr_t)(d+k))%64;++k) d[k]=m[k]*s[k];
  const bool sa = ((uintptr_t)(s+k))%16==0;
  if(nt) for(;k+8<=len;k+=8){
      __m128d a0=_mm_loadu_pd(s+k),a1=_mm_loadu_pd(s+k+2),a2=_mm_loadu_pd(s+k+4),a3=_mm_loadu_pd(s+k+6);
      _mm_stream_pd(d+k,_mm_mul_pd(_mm_loadu_pd(m+k),a0)); _mm_stream_pd(d+k+2,_mm_mul_pd(_mm_loadu_pd(m+k+2),a1));
      _mm_stream_pd(d+k+4,_mm_mul_pd(_mm_loadu_pd(m+k+4),a2)); _mm_stream_pd(d+k+6,_mm_mul_pd(_mm_loadu_pd(m+k+6),a3));}
  else for(;k+8<=len;k+=8){
      __m128d a0=_mm_load_pd(s+k),a1=_mm_load_pd(s+k+2),a2=_mm_load_pd(s+k+4),a3=_mm_load_pd(s+k+6);
      _mm_store_pd(d+k,_mm_mul_pd(_mm_loadu_pd(m+k),a0)); _mm_store_pd(d+k+2,_mm_mul_pd(_mm_loadu_pd(m+k+2),a1));
      _mm_store_pd(d+k+4,_mm_mul_pd(_mm_loadu_pd(m+k+4),a2)); _mm_store_pd(d+k+6,_mm_mul_pd(_mm_loadu_pd(m+k+6),a3));}
  (void)sa;
  for(;k<len;++k) d[k]=m[k]*s[k];
}
__attribute__((target("avx2")))
static inline void run_avx(const double* m, const double* s, double* d, long len, bool nt, long pf){
  long k=0;
  for(;k<len && ((uintptr_t)(d+k))%32;++k) d[k]=m[k]*s[k];
  if(nt) for(;k+8<=len;k+=8){ if(pf) _mm_prefetch((const char*)(s+k+pf),_MM_HINT_T0);
      _mm256_stream_pd(d+k,_mm256_mul_pd(_mm256_loadu_pd(m+k),_mm256_loadu_pd(s+k)));
      _mm256_stream_pd(d+k+4,_mm256_mul_pd(_mm256_loadu_pd(m+k+4),_mm256_loadu_pd(s+k+4)));}
  else for(;k+8<=len;k+=8){ if(pf) _mm_prefetch((const char*)(s+k+pf),_MM_HINT_T0);
      _mm256_store_pd(d+k,_mm256_mul_pd(_mm256_loadu_pd(m+k),_mm256_load_pd(s+k)));
      _mm256_store_pd(d+k+4,_mm256_mul_pd(_mm256_loadu_pd(m+k+4),_mm256_load_pd(s+k+4)));}
  for(;k<len;++k) d[k]=m[k]*s[k];
}
// share t: flat [a,b); column tiled
template<class F> void tiled(long a,long b,long col,F f){
  long x0=a/P,x1=(b-1)/P+1;
  for(long c=0;c<P;c+=col) for(long x=x0;x<x1;++x){ long lo=max(c, x==x0? a-x0*P:0), hi=min(c+col, x+1==x1? b-(x1-1)*P:P); if(lo<hi) f(x,lo,hi);} }
int main(int argc,char**argv){
  int T=omp_get_max_threads();
  in_=(double*)aligned_alloc(4096,N*8); out_=(double*)aligned_alloc(4096,N*8); m_=(double*)aligned_alloc(4096,P*8);
  #pragma omp parallel for schedule(static)
  for(long i=0;i<N;++i){in_[i]=1+i%7; out_[i]=0;}
  for(long i=0;i<P;++i)m_[i]=1.5;
  struct V{string name; function<void()> f; bool inplace; vector<double> t;};
  vector<V> vs;
  auto share=[&](int t,long&a,long&b){a=N*t/T/8*8;b=t+1==T?N:N*(t+1)/T/8*8;};
  vs.push_back({"memcpy",[&]{
    #pragma omp parallel
    {long a,b;share(omp_get_thread_num(),a,b);memcpy(out_+a,in_+a,(b-a)*8);} },false});
  for(long col: {16384L, 65536L, 262144L, 1250000L}) for(int kind=0;kind<3;++kind){
    vs.push_back({string(kind==0?"ntcopy":kind==1?"kernel nt out":"kernel inplace")+" col"+to_string(col),[&,col,kind]{
    #pragma omp parallel
    {long a,b;share(omp_get_thread_num(),a,b); double* d=kind==2?in_:out_;
     tiled(a,b,col,[&](long x,long lo,long hi){
       if(kind==0){ double* dd=d+x*P+lo; const double* ss=in_+x*P+lo; long len=hi-lo,k=0;
         for(;k<len&&((uintptr_t)(dd+k))%64;++k) dd[k]=ss[k];
         for(;k+8<=len;k+=8){__m128d a0=_mm_loadu_pd(ss+k),a1=_mm_loadu_pd(ss+k+2),a2=_mm_loadu_pd(ss+k+4),a3=_mm_loadu_pd(ss+k+6);
           _mm_stream_pd(dd+k,a0);_mm_stream_pd(dd+k+2,a1);_mm_stream_pd(dd+k+4,a2);_mm_stream_pd(dd+k+6,a3);}
         for(;k<len;++k) dd[k]=ss[k];
       } else run_sse4(m_+lo,in_+x*P+lo,d+x*P+lo,hi-lo,kind==1);});
     _mm_sfence();} },kind==2});
  }
  for(int inp=0;inp<2;++inp) vs.push_back({string("kernel 16-byte stores (before) ")+(inp?"inplace":"nt out")+" col65536",[&,inp]{
    #pragma omp parallel
    {long a,b;share(omp_get_thread_num(),a,b); double* d=inp?in_:out_;
     tiled(a,b,65536,[&](long x,long lo,long hi){run_sse(m_+lo,in_+x*P+lo,d+x*P+lo,hi-lo,!inp);});
     _mm_sfence();} },(bool)inp});
  vs.push_back({"read-only sum",[&]{ double s=0;
    #pragma omp parallel reduction(+:s)
    {long a,b;share(omp_get_thread_num(),a,b); for(long i=a;i<b;++i) s+=in_[i];} if(s==42) puts("");},false});
  int R=atoi(argv[1]);
  for(int r=0;r<=R;++r) for(size_t i=0;i<vs.size();++i){auto&v=vs[(i+r)%vs.size()];
    auto t0=chrono::steady_clock::now(); v.f(); double s=chrono::duration<double>(chrono::steady_clock::now()-t0).count(); if(r) v.t.push_back(s);}
  double lim=0;
  for(auto&v:vs){sort(v.t.begin(),v.t.end()); double med=v.t[v.t.size()/2]; double g=16.0*N/med/1e9, best=16.0*N/v.t[0]/1e9; if(v.name=="memcpy") lim=g;
    printf("%-45s median %6.1f GB/s (%5.1f%%)  best %6.1f\n",v.name.c_str(),g,100*g/lim,best);}
}
