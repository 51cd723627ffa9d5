# Sourced by the device scripts: link_kokkos puts the Kokkos and Kokkos
# Kernels prefixes carried in .device/ (kokkos-cuda, kk-cuda, kokkos-cpu,
# kk-cpu: this machine's scripts/bootstrap-kokkos*.sh installs) at the paths
# their CMake files name, under $cache, and the CUDA libraries where Kokkos
# looks for them. Needs $root (the checkout) and $cache.
link_kokkos() {
  # The carried prefixes at the paths their CMake files name.
  mkdir -p "$cache"
  ln -sfn "$root/.device/kokkos-cuda" "$cache/kokkos-3.4.1-e3e389ae-cuda-HOPPER90"
  ln -sfn "$root/.device/kk-cuda" "$cache/kokkos-kernels-3.4.1-on-kokkos-3.4.1-e3e389ae-cuda-HOPPER90"
  ln -sfn "$root/.device/kokkos-cpu" "$cache/kokkos-3.4.1-e3e389ae-cpu"
  ln -sfn "$root/.device/kk-cpu" "$cache/kokkos-kernels-3.4.1-on-kokkos-3.4.1-e3e389ae-cpu"
  # Kokkos names the CUDA libraries where this machine's toolkit had them
  # (lib/, lib64/); the image keeps them in targets/x86_64-linux/lib.
  local lib=/usr/local/cuda/targets/x86_64-linux/lib
  mkdir -p /usr/local/cuda/lib/stubs /usr/local/cuda/lib64
  [[ -e /usr/local/cuda/lib/libcudart.so ]] || ln -sfn $lib/libcudart.so /usr/local/cuda/lib/libcudart.so
  [[ -e /usr/local/cuda/lib/stubs/libcuda.so ]] || ln -sfn $lib/stubs/libcuda.so /usr/local/cuda/lib/stubs/libcuda.so
  [[ -e /usr/local/cuda/lib64/libcublas.so ]] || ln -sfn $lib/libcublas.so /usr/local/cuda/lib64/libcublas.so
}

