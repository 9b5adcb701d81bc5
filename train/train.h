#pragma once
// The training toolkit: pieces a hand-written training loop calls (progress bar, metrics logs,
// checkpoints, non-finite guard, early stopping, learning-curve plot); none of them owns the loop.
#include "train/checkpoint.h"
#include "train/early_stopping.h"
#include "train/guard.h"
#include "train/learning_curve.h"
#include "train/metrics_log.h"
#include "train/mode.h"
#include "train/progress.h"
#include "train/state.h"
