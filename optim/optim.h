#pragma once
// The optim layer: Optimizer with parameter groups and resumable state, Adam/AdamW, SGD, Muon, gradient
// clipping and LR schedules.
#include "optim/adam.h"
#include "optim/clip.h"
#include "optim/muon.h"
#include "optim/optimizer.h"
#include "optim/scheduler.h"
#include "optim/sgd.h"
