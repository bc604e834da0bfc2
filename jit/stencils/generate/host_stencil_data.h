/* The data a stencil host entry reads: its host's model (ffijit/jit/host_entry.h) as the entry uses
 * it, copied after the entry's code. One layout for the stencils that read it (host_stencils.c,
 * freestanding C) and the tier that writes it (host_stencil_entry.cc). */
#ifndef FFIJIT_JIT_STENCILS_GENERATE_HOST_STENCIL_DATA_H_
#define FFIJIT_JIT_STENCILS_GENERATE_HOST_STENCIL_DATA_H_

#include <stddef.h>
#include <stdint.h>

/* The model's FFIJITHostIntLayout, as the stencils test it. */
#define FFIJIT_HOST_INT_OPAQUE 0
#define FFIJIT_HOST_INT_SIZED_DIGITS 1
#define FFIJIT_HOST_INT_TAGGED_DIGITS 2

/* Arguments a stencil host entry converts, and the bytes of tensor slots its frame holds. */
#define FFIJIT_HOST_STENCIL_MAX_ARGS 16
#define FFIJIT_HOST_STENCIL_SLOT_BYTES 2048

/* The fields a short call reads come first, in one cache line (the data is 64-byte aligned): the
 * lock holder and call count (at the offsets the x86-64 assembly entry and epilogue name), the
 * function, the objects and boxers of the common results; then, in the next line, what the
 * argument stencils read of the common forms. */
#define FFIJIT_HOST_DATA_LOCK_HOLDER 0
#define FFIJIT_HOST_DATA_LOCK_CALLS 8
/* The model's held_work and run_held_work, read by the epilogue after a call that recorded its
 * holder (NULL held_work: none). */
#define FFIJIT_HOST_DATA_HELD_WORK 272
#define FFIJIT_HOST_DATA_RUN_HELD_WORK 280
typedef struct FFIJITHostStencilData {
  const void** lock_holder; /* NULL: no holder recorded (also when the lock is released) */
  uint64_t* lock_calls;
  void* function; /* the function's handle (an entry's code is its own) */
  void* none;
  void* true_value;
  void* false_value;
  void* (*new_int)(int64_t value);
  void* (*new_float)(double value);

  const void* int_type;
  const void* float_type;
  const void* str_type;
  const void* device_type;
  const void* dtype_type;
  int32_t type_offset;
  int32_t int_size_offset;
  int32_t int_digits_offset;
  int32_t float_value_offset;
  int32_t device_value_offset;
  int32_t dtype_value_offset;

  int32_t int_layout; /* FFIJIT_HOST_INT_*: how a small exact int is read in place */
  int32_t plain_refcount;
  int32_t tensor_slot_size;
  int32_t str_flags_offset; /* -1: every str through str_data */
  uint32_t str_inline_mask;
  int32_t str_length_offset;
  int32_t str_inline_data_offset;
  int32_t function_cell_offset; /* where a function object's safe_call is: sizeof(TVMFFIObject) */
  int32_t release_lock_around_call;
  int64_t (*int_value)(void* obj);
  void* (*error_occurred)(void);
  void (*clear_error)(void);
  const char* (*str_data)(void* obj);
  int (*pointer_to_any)(void* obj, void* any);
  void* (*borrow_tensor)(void* obj, void* slot);
  void (*release_tensor)(void* slot);
  void* (*new_ref)(void* obj);
  void* (*box_result)(void* any);
  void* (*raise_error)(int rc);
  void* (*release_lock)(void);
  void (*acquire_lock)(void* state);
  const void* (*memchr)(const void* s, int c, size_t n);
  void* const* held_work;
  void (*run_held_work)(void);
} FFIJITHostStencilData;

#endif /* FFIJIT_JIT_STENCILS_GENERATE_HOST_STENCIL_DATA_H_ */
