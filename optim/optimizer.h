#pragma once
// Optimizer: the base of every update rule. Parameters come in groups, each with its own lr and weight
// decay; per-parameter state lives in vectors parallel to params() (STYLE §10). Subclasses declare those
// vectors by name, so state_dict, save and load work for every optimizer without per-class code.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "autograd/variable.h"
#include "core/safetensors.h"

namespace tg::optim {

/// Parameters that share hyper-parameters. An unset lr or weight_decay takes the optimizer's option;
/// after construction both are always set.
struct ParamGroup {
  std::vector<Variable> params = {};                  ///< the parameters of the group
  std::optional<double> lr = std::nullopt;            ///< the group's learning rate; unset = the optimizer's
  std::optional<double> weight_decay = std::nullopt;  ///< the group's weight decay; unset = the optimizer's
  /// Set by the first LR scheduler attached: its base lr (as PyTorch).
  std::optional<double> initial_lr = std::nullopt;
};

/// What resuming needs. `tensors`: per-parameter state keyed "<index in params()>.<name>" ("0.exp_avg").
/// `values`: exact decimal strings (shortest round-trip) for step counts ("0.step"), groups ("group.0.lr"),
/// hyper-parameters ("betas.0", "amsgrad"), the optimizer type and each parameter's shape ("0.shape").
/// save() writes the values as the file's safetensors metadata.
struct OptimizerState {
  TensorMap tensors;  ///< per-parameter state by name ("0.exp_avg")
  /// Counters, hyper-parameters and shapes as exact decimal strings (above).
  std::map<std::string, std::string> values;
};

/// The base of every update rule (PyTorch's torch.optim.Optimizer): parameter groups, per-parameter state
/// declared by name, zero_grad, and state_dict, save and load for every subclass.
class Optimizer {
 public:
  virtual ~Optimizer() = default;
  Optimizer(const Optimizer&) = delete;  // registered state is referred to by address
  Optimizer& operator=(const Optimizer&) = delete;

  /// One update of every parameter that has a gradient, under NoGradGuard; the others stay untouched.
  virtual void step() = 0;
  /// Drops every parameter's gradient.
  void zero_grad();

  /// All parameters, group after group; per-parameter state is indexed the same way.
  const std::vector<Variable>& params() const { return params_; }
  const std::vector<ParamGroup>& param_groups() const { return groups_; }  ///< the groups, with lr and weight_decay set
  /// A group's learning rate; IndexError naming a group that does not exist.
  double lr(size_t group = 0) const;
  /// Sets a group's learning rate (as LR schedulers do); ValueError for a negative or non-finite lr.
  void set_lr(size_t group, double lr);
  /// A hyper-parameter the subclass registered ("momentum" for SGD, "betas.0" for Adam): what schedulers
  /// that cycle momentum read and write. nullopt when this optimizer has no option of that name.
  std::optional<double> option(const std::string& name) const;
  /// Sets a registered option; ValueError for an unknown name or a value its own check refuses.
  void set_option(const std::string& name, double value);

  /// The state; its tensors share storage with the optimizer (clone them to keep a snapshot).
  OptimizerState state_dict() const;
  /// Restores a state_dict() of the same optimizer type over parameters of the same count and shapes.
  /// Checks everything before changing anything: ValueError for another type, parameter or group count,
  /// a missing or malformed value or an unexpected tensor; ShapeError/DTypeError naming the parameter.
  /// Construct the optimizer and its schedulers first, then load both.
  void load_state_dict(const OptimizerState& state);
  /// state_dict() to a safetensors file, written atomically.
  void save(const std::string& path) const;
  /// load_state_dict from a file save() wrote; ValueError for a corrupt file, and as load_state_dict.
  void load(const std::string& path);

 protected:
  /// `name` prefixes error messages ("Adam: ..."). Validates the groups and the default lr/weight_decay.
  Optimizer(std::string name, std::vector<ParamGroup> groups, double lr, double weight_decay);
  /// Declare per-parameter state (vectors parallel to params()) and options to state_dict. Tensors may be
  /// undefined (not created yet) and are then not saved; options are restored on load, flags must match.
  void register_state(const std::string& name, std::vector<Tensor>& tensors);
  /// Per-parameter step counts, as above.
  void register_state(const std::string& name, std::vector<int64_t>& counts);
  /// A hyper-parameter restored on load, checked as check_option.
  void register_option(const std::string& name, double& value, bool below_one = false);
  /// A flag saved with the state; load throws ValueError when the file's differs.
  void register_flag(const std::string& name, const bool& value);
  /// ValueError naming `what` unless `value` is finite, >= 0 and (when `below_one`) < 1.
  void check_option(const char* what, double value, bool below_one = false) const;

  std::string name_;                ///< the optimizer's type ("Adam"), for errors and state
  std::vector<ParamGroup> groups_;  ///< the groups, with lr and weight_decay set
  std::vector<Variable> params_;    ///< every parameter, group after group
  std::vector<size_t> group_of_;    ///< the group of each parameter

 private:
  friend class LRScheduler;  // sets initial_lr
  std::vector<std::pair<std::string, std::vector<Tensor>*>> tensor_state_;
  std::vector<std::pair<std::string, std::vector<int64_t>*>> count_state_;
  struct Option {
    std::string name;
    double* value;
    bool below_one;  // validated like check_option on load
  };
  std::vector<Option> options_;
  std::vector<std::pair<std::string, const bool*>> flags_;
};

}  // namespace tg::optim
