// mlp_autoencoder, baton's small reconstruction model: the image flattened to D = C·H·W values,
// encoder.0 .. 5 (Linear D→512, ReLU, Linear 512→128, ReLU, Linear 128→32, ReLU) and
// decoder.0 .. 5 (Linear 32→128, ReLU, Linear 128→512, ReLU, Linear 512→D, Sigmoid); the loss is
// the MSE between the reconstruction and the flattened input. PyTorch's default initialisation.
#include <string>

#include "models/model_builders.h"
#include "models/model_parts.h"

namespace baton::models {

Graph build_mlp_autoencoder(const ModelOptions& o) {
  layers::GraphBuilder g;
  const ValueId flat = g.flatten(declare_inputs(g, o, Task::reconstruction), "flatten");
  const int64_t width[] = {512, 128, 32, 128, 512, g.shape(flat)[1]};
  ValueId y = flat;
  for (int i = 0; i < 6; ++i) {
    const std::string prefix = i < 3 ? "encoder." : "decoder.";
    const int position = 2 * (i % 3);
    y = g.linear(y, width[i], prefix + std::to_string(position));
    y = i == 5 ? g.sigmoid(y, prefix + std::to_string(position + 1)) : g.relu(y, prefix + std::to_string(position + 1));
  }
  return finish_reconstruction(g, y, flat, o);
}

}  // namespace baton::models
