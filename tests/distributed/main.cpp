// The distributed suite's entry point: MPI starts before the first case and ends after the last, and each
// rank is one thread (the layout the README recommends: N processes of --threads 1). Run under mpirun: every
// rank runs every case, in doctest's one order, so that their collectives meet.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include "core/parallel.h"
#include "distributed/environment.h"

int main(int argc, char** argv) {
  tg::distributed::Environment mpi;
  tg::set_num_threads(1);
  doctest::Context context(argc, argv);
  return context.run();
}
