// The emulated cuBLAS, cuDNN and NCCL entry points through the emulated runtime: hand-computed
// results (GEMM with lda > m and a transpose, TF32 visible, convolution, batch norm) and the strict
// checks (bad lda, unsupported types, too little workspace, mismatched descriptors, wrong device).
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cudnn.h>
#include <gtest/gtest.h>
#include <nccl.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

namespace {

constexpr float kNan = std::numeric_limits<float>::quiet_NaN();

// Device memory holding `host`, copied back by read().
template <typename T>
struct DeviceBuffer {
  explicit DeviceBuffer(const std::vector<T>& host) : size(host.size()) {
    EXPECT_EQ(cudaMalloc(&data, size * sizeof(T)), cudaSuccess);
    EXPECT_EQ(cudaMemcpy(data, host.data(), size * sizeof(T), cudaMemcpyHostToDevice), cudaSuccess);
  }
  ~DeviceBuffer() { EXPECT_EQ(cudaFree(data), cudaSuccess); }
  std::vector<T> read() const {
    std::vector<T> host(size);
    EXPECT_EQ(cudaMemcpy(host.data(), data, size * sizeof(T), cudaMemcpyDeviceToHost), cudaSuccess);
    return host;
  }
  T* data = nullptr;
  size_t size;
};

struct Cublas {
  Cublas() { EXPECT_EQ(cublasCreate(&handle), CUBLAS_STATUS_SUCCESS); }
  ~Cublas() { EXPECT_EQ(cublasDestroy(handle), CUBLAS_STATUS_SUCCESS); }
  cublasHandle_t handle = nullptr;
};

TEST(EmuCublas, GemmWithLeadingDimensionTransposeAndBeta) {
  ASSERT_EQ(cudaSetDevice(0), cudaSuccess);
  Cublas blas;
  // A stored transposed (3 x 2, lda = 4 > 3: one padding row of NaN), B = [[1, 0], [0, 1], [1, 1]].
  DeviceBuffer<float> a({1, 2, 3, kNan, 4, 5, 6, kNan});
  DeviceBuffer<float> b({1, 0, 1, 0, 1, 1});
  DeviceBuffer<float> c({1, 1, 1, 1});
  const float alpha = 2, beta = 0.5f;
  ASSERT_EQ(cublasGemmEx(blas.handle, CUBLAS_OP_T, CUBLAS_OP_N, 2, 2, 3, &alpha, a.data, CUDA_R_32F, 4, b.data,
                         CUDA_R_32F, 3, &beta, c.data, CUDA_R_32F, 2, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
            CUBLAS_STATUS_SUCCESS);
  EXPECT_EQ(c.read(), (std::vector<float>{8.5f, 20.5f, 10.5f, 22.5f}));  // 2 * [[4, 5], [10, 11]] + 0.5
}

TEST(EmuCublas, Tf32IsVisibleOnlyWhenAllowed) {
  ASSERT_EQ(cudaSetDevice(0), cudaSuccess);
  Cublas blas;
  const float small = 1.0f + std::ldexp(1.0f, -12), alpha = 1, beta = 0;
  DeviceBuffer<float> a({small}), b({1}), c({kNan});
  auto gemm = [&](cublasComputeType_t compute) {
    EXPECT_EQ(cublasGemmEx(blas.handle, CUBLAS_OP_N, CUBLAS_OP_N, 1, 1, 1, &alpha, a.data, CUDA_R_32F, 1, b.data,
                           CUDA_R_32F, 1, &beta, c.data, CUDA_R_32F, 1, compute, CUBLAS_GEMM_DEFAULT),
              CUBLAS_STATUS_SUCCESS);
    return c.read()[0];
  };
  EXPECT_EQ(gemm(CUBLAS_COMPUTE_32F), small);
  EXPECT_EQ(gemm(CUBLAS_COMPUTE_32F_FAST_TF32), 1.0f);
  ASSERT_EQ(cublasSetMathMode(blas.handle, CUBLAS_TF32_TENSOR_OP_MATH), CUBLAS_STATUS_SUCCESS);
  EXPECT_EQ(gemm(CUBLAS_COMPUTE_32F), 1.0f);
}

TEST(EmuCublas, StrictArgumentChecks) {
  ASSERT_EQ(cudaSetDevice(0), cudaSuccess);
  Cublas blas;
  DeviceBuffer<float> a(std::vector<float>(16, 1)), b(std::vector<float>(16, 1)), c(std::vector<float>(16, 1));
  const float alpha = 1, beta = 0;
  auto gemm = [&](cublasHandle_t h, cublasOperation_t ta, int lda, cudaDataType ctype, cublasComputeType_t compute) {
    return cublasGemmEx(h, ta, CUBLAS_OP_N, 3, 2, 2, &alpha, a.data, CUDA_R_32F, lda, b.data, CUDA_R_32F, 2, &beta,
                        c.data, ctype, 3, compute, CUBLAS_GEMM_DEFAULT);
  };
  EXPECT_EQ(gemm(blas.handle, CUBLAS_OP_N, 3, CUDA_R_32F, CUBLAS_COMPUTE_32F), CUBLAS_STATUS_SUCCESS);
  EXPECT_EQ(gemm(blas.handle, CUBLAS_OP_N, 2, CUDA_R_32F, CUBLAS_COMPUTE_32F), CUBLAS_STATUS_INVALID_VALUE);  // < m
  EXPECT_EQ(gemm(blas.handle, CUBLAS_OP_T, 2, CUDA_R_32F, CUBLAS_COMPUTE_32F), CUBLAS_STATUS_SUCCESS);        // k = 2
  EXPECT_EQ(gemm(blas.handle, static_cast<cublasOperation_t>(7), 3, CUDA_R_32F, CUBLAS_COMPUTE_32F),
            CUBLAS_STATUS_INVALID_VALUE);
  EXPECT_EQ(gemm(blas.handle, CUBLAS_OP_N, 3, CUDA_R_64F, CUBLAS_COMPUTE_32F), CUBLAS_STATUS_NOT_SUPPORTED);
  EXPECT_EQ(gemm(blas.handle, CUBLAS_OP_N, 3, CUDA_R_32F, CUBLAS_COMPUTE_64F), CUBLAS_STATUS_NOT_SUPPORTED);
  EXPECT_EQ(gemm(nullptr, CUBLAS_OP_N, 3, CUDA_R_32F, CUBLAS_COMPUTE_32F), CUBLAS_STATUS_NOT_INITIALIZED);
}

TEST(EmuCublasDeathTest, HandleUsedWhileAnotherDeviceIsCurrent) {
  ASSERT_EQ(cudaSetDevice(0), cudaSuccess);
  cublasHandle_t handle = nullptr;
  ASSERT_EQ(cublasCreate(&handle), CUBLAS_STATUS_SUCCESS);
  ASSERT_EQ(cudaSetDevice(1), cudaSuccess);
  EXPECT_DEATH(cublasSetMathMode(handle, CUBLAS_DEFAULT_MATH), "belongs to device 0");
  ASSERT_EQ(cudaSetDevice(0), cudaSuccess);
  EXPECT_EQ(cublasDestroy(handle), CUBLAS_STATUS_SUCCESS);
  EXPECT_DEATH(cublasSetMathMode(handle, CUBLAS_DEFAULT_MATH), "destroyed");
}

// The 1-channel 3x3 padded, strided case of the reference test, through cuDNN's calls.
struct Conv3x3 {
  Conv3x3() {
    EXPECT_EQ(cudnnCreate(&handle), CUDNN_STATUS_SUCCESS);
    EXPECT_EQ(cudnnCreateTensorDescriptor(&x), CUDNN_STATUS_SUCCESS);
    EXPECT_EQ(cudnnCreateTensorDescriptor(&y), CUDNN_STATUS_SUCCESS);
    EXPECT_EQ(cudnnCreateFilterDescriptor(&w), CUDNN_STATUS_SUCCESS);
    EXPECT_EQ(cudnnCreateConvolutionDescriptor(&conv), CUDNN_STATUS_SUCCESS);
    EXPECT_EQ(cudnnSetTensor4dDescriptor(x, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 1, 1, 3, 3), CUDNN_STATUS_SUCCESS);
    EXPECT_EQ(cudnnSetTensor4dDescriptor(y, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 1, 1, 2, 2), CUDNN_STATUS_SUCCESS);
    EXPECT_EQ(cudnnSetFilter4dDescriptor(w, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, 1, 1, 3, 3), CUDNN_STATUS_SUCCESS);
    EXPECT_EQ(cudnnSetConvolution2dDescriptor(conv, 1, 1, 2, 2, 1, 1, CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT),
              CUDNN_STATUS_SUCCESS);
    EXPECT_EQ(cudnnSetConvolutionMathType(conv, CUDNN_FMA_MATH), CUDNN_STATUS_SUCCESS);
  }
  ~Conv3x3() {
    cudnnDestroyConvolutionDescriptor(conv);
    cudnnDestroyFilterDescriptor(w);
    cudnnDestroyTensorDescriptor(y);
    cudnnDestroyTensorDescriptor(x);
    EXPECT_EQ(cudnnDestroy(handle), CUDNN_STATUS_SUCCESS);
  }
  cudnnHandle_t handle = nullptr;
  cudnnTensorDescriptor_t x = nullptr, y = nullptr;
  cudnnFilterDescriptor_t w = nullptr;
  cudnnConvolutionDescriptor_t conv = nullptr;
  DeviceBuffer<float> x_data{{1, 2, 3, 4, 5, 6, 7, 8, 9}};
  DeviceBuffer<float> w_data{{0, 1, 0, 1, -1, 0, 0, 0, 2}};
  DeviceBuffer<float> y_data{{kNan, kNan, kNan, kNan}};
  const float one = 1, zero = 0;
};

TEST(EmuCudnn, ForwardMatchesTheHandComputedCaseAndChecksWorkspace) {
  ASSERT_EQ(cudaSetDevice(0), cudaSuccess);
  Conv3x3 c;
  ASSERT_EQ(cudnnConvolutionForward(c.handle, &c.one, c.x, c.x_data.data, c.w, c.w_data.data, c.conv,
                                    CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM, nullptr, 0, &c.zero, c.y, c.y_data.data),
            CUDNN_STATUS_SUCCESS);
  EXPECT_EQ(c.y_data.read(), (std::vector<float>{9, -1, -3, 5}));

  size_t gemm_bytes = 0;
  ASSERT_EQ(cudnnGetConvolutionForwardWorkspaceSize(c.handle, c.x, c.w, c.conv, c.y, CUDNN_CONVOLUTION_FWD_ALGO_GEMM,
                                                    &gemm_bytes),
            CUDNN_STATUS_SUCCESS);
  ASSERT_GT(gemm_bytes, 0u);
  EXPECT_EQ(cudnnConvolutionForward(c.handle, &c.one, c.x, c.x_data.data, c.w, c.w_data.data, c.conv,
                                    CUDNN_CONVOLUTION_FWD_ALGO_GEMM, nullptr, 0, &c.zero, c.y, c.y_data.data),
            CUDNN_STATUS_BAD_PARAM);
  char message[256];
  cudnnGetLastErrorString(message, sizeof message);
  EXPECT_NE(std::string(message).find("workspace"), std::string::npos) << message;

  // The search with no workspace: GEMM reported unusable, the usable ones first with a measured time.
  cudnnConvolutionFwdAlgoPerf_t perf[CUDNN_CONVOLUTION_FWD_ALGO_COUNT];
  int returned = 0;
  ASSERT_EQ(cudnnFindConvolutionForwardAlgorithmEx(c.handle, c.x, c.x_data.data, c.w, c.w_data.data, c.conv, c.y,
                                                   c.y_data.data, CUDNN_CONVOLUTION_FWD_ALGO_COUNT, &returned, perf,
                                                   nullptr, 0),
            CUDNN_STATUS_SUCCESS);
  ASSERT_EQ(returned, CUDNN_CONVOLUTION_FWD_ALGO_COUNT);
  EXPECT_EQ(perf[0].status, CUDNN_STATUS_SUCCESS);
  EXPECT_GE(perf[0].time, 0.0f);
  EXPECT_EQ(perf[0].memory, 0u);
  for (const auto& p : perf) {
    if (p.algo == CUDNN_CONVOLUTION_FWD_ALGO_GEMM) {
      EXPECT_NE(p.status, CUDNN_STATUS_SUCCESS);
    }
  }
}

TEST(EmuCudnn, MismatchedDescriptorsAreRejected) {
  ASSERT_EQ(cudaSetDevice(0), cudaSuccess);
  Conv3x3 c;
  ASSERT_EQ(cudnnSetTensor4dDescriptor(c.x, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 1, 2, 3, 3), CUDNN_STATUS_SUCCESS);
  EXPECT_EQ(cudnnConvolutionForward(c.handle, &c.one, c.x, c.x_data.data, c.w, c.w_data.data, c.conv,
                                    CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM, nullptr, 0, &c.zero, c.y, c.y_data.data),
            CUDNN_STATUS_BAD_PARAM);
  ASSERT_EQ(cudnnSetTensor4dDescriptor(c.x, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 1, 1, 5, 5), CUDNN_STATUS_SUCCESS);
  EXPECT_EQ(cudnnConvolutionForward(c.handle, &c.one, c.x, c.x_data.data, c.w, c.w_data.data, c.conv,
                                    CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM, nullptr, 0, &c.zero, c.y, c.y_data.data),
            CUDNN_STATUS_NOT_SUPPORTED);  // a 5x5 input gives a 3x3 output, y is 2x2
}

TEST(EmuCudnn, BatchNormTrainingForwardOfA2x2Tensor) {
  ASSERT_EQ(cudaSetDevice(0), cudaSuccess);
  cudnnHandle_t handle = nullptr;
  ASSERT_EQ(cudnnCreate(&handle), CUDNN_STATUS_SUCCESS);
  cudnnTensorDescriptor_t x = nullptr, param = nullptr;
  ASSERT_EQ(cudnnCreateTensorDescriptor(&x), CUDNN_STATUS_SUCCESS);
  ASSERT_EQ(cudnnCreateTensorDescriptor(&param), CUDNN_STATUS_SUCCESS);
  ASSERT_EQ(cudnnSetTensor4dDescriptor(x, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 2, 2, 1, 1), CUDNN_STATUS_SUCCESS);
  ASSERT_EQ(cudnnDeriveBNTensorDescriptor(param, x, CUDNN_BATCHNORM_SPATIAL), CUDNN_STATUS_SUCCESS);
  DeviceBuffer<float> xd({1, 2, 3, 6}), yd({kNan, kNan, kNan, kNan}), scale({2, 3}), bias({0.5f, -1});
  DeviceBuffer<float> running_mean({10, 20}), running_var({1, 1}), save_mean({0, 0}), save_inv_std({0, 0});
  const float one = 1, zero = 0;
  ASSERT_EQ(cudnnBatchNormalizationForwardTraining(handle, CUDNN_BATCHNORM_SPATIAL, &one, &zero, x, xd.data, x, yd.data,
                                                   param, scale.data, bias.data, 0.5, running_mean.data,
                                                   running_var.data, 0.0, save_mean.data, save_inv_std.data),
            CUDNN_STATUS_SUCCESS);
  EXPECT_EQ(yd.read(), (std::vector<float>{-1.5f, -4, 2.5f, 2}));
  EXPECT_EQ(running_var.read(), (std::vector<float>{1.5f, 4.5f}));  // unbiased batch variance 2 and 8
  EXPECT_EQ(save_inv_std.read(), (std::vector<float>{1, 0.5f}));
  EXPECT_EQ(cudnnBatchNormalizationForwardTraining(handle, CUDNN_BATCHNORM_SPATIAL, &one, &zero, x, xd.data, x, yd.data,
                                                   param, scale.data, bias.data, 0.5, running_mean.data, nullptr, 0.0,
                                                   save_mean.data, save_inv_std.data),
            CUDNN_STATUS_BAD_PARAM);  // running mean without running variance
  EXPECT_EQ(cudnnBatchNormalizationForwardTraining(handle, CUDNN_BATCHNORM_SPATIAL, &one, &zero, x, xd.data, x, yd.data,
                                                   param, scale.data, bias.data, 0.5, nullptr, nullptr, -1e-5, nullptr,
                                                   nullptr),
            CUDNN_STATUS_BAD_PARAM);  // epsilon below CUDNN_BN_MIN_EPSILON
  cudnnDestroyTensorDescriptor(param);
  cudnnDestroyTensorDescriptor(x);
  EXPECT_EQ(cudnnDestroy(handle), CUDNN_STATUS_SUCCESS);
}

TEST(EmuNccl, VersionAndErrorStrings) {
  int version = 0;
  ASSERT_EQ(ncclGetVersion(&version), ncclSuccess);
  EXPECT_EQ(version, 22809);
  EXPECT_EQ(ncclGetVersion(nullptr), ncclInvalidArgument);
  EXPECT_STREQ(ncclGetErrorString(ncclSuccess), "no error");
}

}  // namespace
