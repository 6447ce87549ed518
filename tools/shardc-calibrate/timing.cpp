// shardc-calibrate's timing: every rank runs a body at once, the slowest
// rank's time counts, and waits give the core up (ranks may share cores).
#include "tools/shardc-calibrate/Calibrate.h"
#include "tools/shardc-calibrate/Estimate.h"

#include <sched.h>

#include <algorithm>
#include <chrono>

namespace shardc::calibrate {

double now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// Waits for `request` giving the core up between polls: a rank spinning in
// a blocking MPI call would hold a core that a rank of another group needs
// when ranks outnumber cores, and the time slices it spins away would land
// in the other group's measurement.
void waitYielding(MPI_Request &request) {
  int done = 0;
  for (MPI_Test(&request, &done, MPI_STATUS_IGNORE); !done;
       MPI_Test(&request, &done, MPI_STATUS_IGNORE))
    sched_yield();
}

void allreduceYielding(const void *in, void *out, int count, MPI_Datatype type, MPI_Op op,
                       MPI_Comm comm) {
  MPI_Request request;
  MPI_Iallreduce(in, out, count, type, op, comm, &request);
  waitYielding(request);
}

std::vector<double> samples(MPI_Comm comm, int repeats, const std::function<void()> &body,
                            bool warmUp) {
  if (warmUp)
    body();
  std::vector<double> times;
  for (int r = 0; r < repeats; ++r) {
    MPI_Request request;
    MPI_Ibarrier(comm, &request);
    waitYielding(request);
    double start = now();
    body();
    double local = now() - start, slowest = 0;
    allreduceYielding(&local, &slowest, 1, MPI_DOUBLE, MPI_MAX, comm);
    times.push_back(std::max(slowest, 1e-9));
  }
  return times;
}

double timed(MPI_Comm comm, int repeats, const std::function<void()> &body) {
  return oneSidedTime(samples(comm, repeats, body));
}

} // namespace shardc::calibrate
