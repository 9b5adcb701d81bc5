#pragma once
// The optim layer: Optimizer with parameter groups and resumable state, Adam/AdamW, SGD, gradient
// clipping and LR schedules.
#include "optim/adam.h"
#include "optim/clip.h"
#include "optim/optimizer.h"
#include "optim/scheduler.h"
#include "optim/sgd.h"
