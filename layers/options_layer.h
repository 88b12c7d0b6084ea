// OptionsLayer: the base of a layer configured by an options struct, which it keeps as given.
#pragma once

#include "runtime/graph/layer.h"

namespace baton::layers {

// Holds the layer's options; the layer's constructor checks them.
template <typename Options>
class OptionsLayer : public Layer {
 public:
  const Options& options() const { return options_; }

 protected:
  explicit OptionsLayer(const Options& options) : options_(options) {}

 private:
  Options options_;
};

}  // namespace baton::layers
