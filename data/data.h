#pragma once
// The data layer: datasets, samplers, collate functions and the DataLoader.
#include "data/collate.h"
#include "data/dataset.h"
#include "data/loader.h"
#include "data/sampler.h"
