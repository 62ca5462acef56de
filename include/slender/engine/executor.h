#pragma once

// The executor concept: what the code of this folder (the engine, engine.h, with its solves,
// system_solve.h, krylov.h and batch_solve.h; the contact pipeline and the contact Jacobian,
// contact_pipeline.h and contact_jacobian.h) asks of the machine it runs on. They are
// templates over an executor X and are written once; two executors implement it:
//   slender::HostExecutor   host/backend/host_executor.h   OpenMP loops, reductions in index
//                                                          order, the CPU's direct solvers;
//                                                          the CPU backend, and CI's stand-in
//                                                          for the GPU
//   slender::CudaExecutor   kernels/cuda_executor.cuh      kernels, CUB, cuSOLVER; the CUDA
//                                                          backend (libslender_cuda.so)
// The front ends (Simulator, BatchedSimulator) own an engine on one of them; nothing else
// touches an executor. A member that is static is called as X::name; the scratch-keeping ones
// (scans, sorts, value reductions) on an X object the engine holds.
//
// Memory
//   template <class T> Buffer      resize(n) (keeps nothing: the contents are undefined, and
//                                  the host poisons them), data(), size(), upload(vector),
//                                  upload(pointer, n), download(vector), fill_zero()
//   template <class T> ConstArray  an array the engine only reads (upload(vector), data(),
//                                  size()): the CUDA executor copies it to the device, the host
//                                  one views the vector in place (it must outlive its use)
//   ModelData                      built from a Model; view(): a ModelView whose pointers X's
//                                  loops can read (the host's own arrays, or device copies)
//   upload(buffer, host, n), upload_at(buffer, offset, host, n),
//   download_at(buffer, offset, host, n), to_host(host, src, n), copy(dst, src, n),
//   fill_zero(p, n)                static transfers and fills (n: elements)
//   kHostMemory                    whether the host reads X's buffers (then the caller's
//                                  force callback runs inside the step)
// Loops
//   for_each(n, f, grain)          f(i) for i in [0, n); grain: the host's threading threshold
//                                  (core/parallel_for.h), which the GPU ignores
//   for_each_env(nenv, f)          one heavy item per environment (a factorization)
//   kLanes, for_each_env_columns(nenv, f)
//                                  threads that cooperate on one environment's column-stepped
//                                  factorization (env_major::BandSolve: f.begin, f.column on every
//                                  lane with a barrier after each column, f.finish); 1: none
//   kStagedColumns, staged_capacity(), for_each_env_columns_staged(nenv, f)
//                                  the same on a staging area of f.stage_size() Reals per
//                                  environment (env_major::BandGatherSolve: f.stage phases,
//                                  f.begin_staged, f.column_staged, f.finish_staged; on the GPU
//                                  a warp's shared memory, at most staged_capacity() bytes);
//                                  executors with kLanes > 1 only
//   sync(), current_device(), OnDevice
//                                  a barrier; the device of the caller's thread, and a scope
//                                  that makes a device current (nothing on the host)
// Reductions (deterministic: the same bits on every run)
//   reduce4(n, f, partial, out)    Red4 of f(i) into *out (X memory); partial: workspace of
//                                  kReducePartials (krylov.h) entries
//   map_reduce4(n, f, partial, out)
//                                  f.map(i) for every i, then reduce4 of f (f(i) reads only
//                                  what f.map(i) wrote at i): one pass on the device, the same
//                                  bits as a for_each of f.map followed by reduce4
//   env_reduce(nenv, len, f, host_out, scratch), env_reduce_to(nenv, len, f, out)
//                                  Red4 of f(e, i) per environment (the host: in index
//                                  order; CUDA: a block per environment, or for one
//                                  environment reduce4's blocks)
//   x.reduce(n, f, init, op)       any associative op of f(i), read back on the host
//   x.exclusive_scan(in, out, n)   -> the total; x.sort_keys(keys, n), x.sort_pairs(keys,
//                                  values, n): stable, ascending (64-bit keys)
// Linear solves and policies
//   DirectSolver, make_direct_solver(n, row_ptr, col, symmetric, kind), direct_name(solver,
//   symmetric), solver_values(solver)
//                                  the sparse direct solve of an n x n CSR pattern
//                                  (factorize(values), solve(b, x), used_fallback()); kind is
//                                  the caller's LinearSolverKind (the host's banded LU, CHOLMOD,
//                                  LDLT, sparse LU; cuSOLVER's Cholesky or QR whatever the kind);
//                                  solver_values: its own value storage, or null
//   kPcgName, kBicgName            the iterative path's names
//   kPcgAutoThreshold              free DOFs from which LinearSolverKind::kAuto is iterative
//   kInterleaved                   the batch's band and dense matrices interleaved across
//                                  environments (coalesced on the GPU) or environment-major
//   kPcgCheckEvery                 the batched CG's iterations between host reads
// Contact
//   ContactFinder                  the engine's contact sub-pairs (constructed from the Model;
//                                  find(q, u, dt) -> changed, download(lists), nee(), npt(),
//                                  and the lists' pointers): ContactPipeline<X>, the one
//                                  pair finder of every executor
