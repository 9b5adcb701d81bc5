#pragma once
// tg::distributed: data-parallel training over MPI (built with TENSORGRAD_MPI, linked as
// tensorgrad::distributed). Run a program under `mpirun -np N`; see the README.
#include "distributed/collectives.h"
#include "distributed/data_parallel.h"
#include "distributed/environment.h"
