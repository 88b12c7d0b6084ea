// The built-in layer registry: each family registers its types here.
#include "layers/builtin_layers.h"

namespace baton::layers {

const LayerRegistry& builtin_layers() {
  static const LayerRegistry registry = [] {
    LayerRegistry r;
    register_activation_layers(r);
    // batch normalisation and pooling
    register_batch_norm_layers(r);
    register_pooling_layers(r);
    return r;
  }();
  return registry;
}

}  // namespace baton::layers
