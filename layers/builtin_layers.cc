// The built-in layer registry: each family registers its types here.
#include "layers/builtin_layers.h"

namespace baton::layers {

const LayerRegistry& builtin_layers() {
  static const LayerRegistry registry = [] {
    LayerRegistry r;
    register_activation_layers(r);
    register_dropout_layers(r);
    register_structural_layers(r);
    register_loss_layers(r);
    register_batch_norm_layers(r);
    register_pooling_layers(r);
    register_conv_layers(r);
    register_linear_layers(r);
    register_one_hot_layers(r);
    return r;
  }();
  return registry;
}

}  // namespace baton::layers
