/*
 * ethosu_driver.h - mcugen's own NPU driver, with the API shape of Arm's ethos-u-core-driver.
 *
 * Firmware written against Arm's driver compiles against this header unchanged: the same
 * function names, argument types, weak hooks and struct ethosu_driver.  Behind it is
 * mcugen's simulated device (mcugen_npu_device.h), not an MMIO block: ethosu_init's
 * base_address is a struct mcugen_npu_device that mcugen_npu_device_init() registered.
 *
 * Every function returns 0 on success and a negative code on failure, as Arm's does; ours are
 * distinct per cause (enum mcugen_npu_result).  TFLM's ethos-u kernel treats only -1 as an
 * error: build with -DMCUGEN_NPU_DRIVER_MINUS_ONE_ON_ERROR to collapse every failure to -1
 * (the distinct code stays available from mcugen_npu_driver_last_error()).
 */
#ifndef ETHOSU_DRIVER_H
#define ETHOSU_DRIVER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define ETHOSU_DRIVER_VERSION_MAJOR 1
#define ETHOSU_DRIVER_VERSION_MINOR 0
#define ETHOSU_DRIVER_VERSION_PATCH 0

#define ETHOSU_SEMAPHORE_WAIT_FOREVER (UINT64_MAX)
#ifndef ETHOSU_SEMAPHORE_WAIT_INFERENCE
#define ETHOSU_SEMAPHORE_WAIT_INFERENCE ETHOSU_SEMAPHORE_WAIT_FOREVER
#endif

/* The simulated NPU time ethosu_wait() allows a job, in device cycles (see docs/npu.md, The driver). */
#ifndef MCUGEN_NPU_DRIVER_TIMEOUT_CYCLES
#define MCUGEN_NPU_DRIVER_TIMEOUT_CYCLES UINT64_MAX
#endif

enum mcugen_npu_result {
    MCUGEN_NPU_OK = 0,
    MCUGEN_NPU_ERR_GENERIC = -1,         /* bad argument, busy, no device, reset failed */
    MCUGEN_NPU_ERR_NOT_INVOKED = -2,     /* ethosu_wait() without a job (as Arm's) */
    MCUGEN_NPU_ERR_BAD_MAGIC = -3,       /* payload is not 'COP1' or not whole words */
    MCUGEN_NPU_ERR_BAD_PAYLOAD = -4,     /* unknown driver action, truncated, no stream */
    MCUGEN_NPU_ERR_CONFIG_MISMATCH = -5, /* CONFIG word: MACs, SHRAM, stream version, product */
    MCUGEN_NPU_ERR_ARCH_MISMATCH = -6,   /* ID word: architecture major, or a newer minor */
    MCUGEN_NPU_ERR_ALIGNMENT = -7,       /* command stream or base address not 16-byte aligned */
    MCUGEN_NPU_ERR_CMD_INVALID = -8,     /* STATUS.cmd_parse_error: undefined/malformed command */
    MCUGEN_NPU_ERR_CMD_TRUNCATED = -9,   /* cmd_parse_error: a cmd1 without its payload word */
    MCUGEN_NPU_ERR_CMD_NO_STOP = -10,    /* cmd_parse_error: the queue ended without NPU_OP_STOP */
    MCUGEN_NPU_ERR_BUS_FAULT = -11,      /* STATUS.bus_status: an operand outside its region */
    MCUGEN_NPU_ERR_DMA_FAULT = -12,      /* bus_status: a DMA source/destination outside */
    MCUGEN_NPU_ERR_WATCHDOG = -13,       /* STATUS.wd_fault */
    MCUGEN_NPU_ERR_TIMEOUT = -14,        /* ethosu_wait() timed out; the device was reset */
    MCUGEN_NPU_ERR_CMD_UNSUPPORTED = -15,/* cmd_parse_error: valid but not modelled */
    MCUGEN_NPU_ERR_ENGINE = -16          /* the compute engine refused an operation */
};

enum ethosu_job_state { ETHOSU_JOB_IDLE = 0, ETHOSU_JOB_RUNNING, ETHOSU_JOB_DONE };
enum ethosu_job_result { ETHOSU_JOB_RESULT_OK = 0, ETHOSU_JOB_RESULT_TIMEOUT, ETHOSU_JOB_RESULT_ERROR };
enum ethosu_request_clients { ETHOSU_PMU_REQUEST = 0, ETHOSU_INFERENCE_REQUEST = 1 };

struct ethosu_job {
    volatile enum ethosu_job_state state;
    volatile enum ethosu_job_result result;
    const void *custom_data_ptr;
    int custom_data_size;
    const uint64_t *base_addr;
    const size_t *base_addr_size;
    int num_base_addr;
    void *user_arg;
};

struct mcugen_npu_device;

struct ethosu_driver {
    struct mcugen_npu_device *dev;
    struct ethosu_driver *next;
    struct ethosu_job job;
    void *semaphore;
    uint64_t fast_memory;
    size_t fast_memory_size;
    uint32_t power_request_counter;
    uint32_t secure, privileged;
    bool reserved;
    /* mcugen: the last job's outcome and the device STATUS it ended with */
    int last_error;
    uint32_t last_status;
    uint64_t timeout_cycles;
};

struct ethosu_driver_version {
    uint8_t major;
    uint8_t minor;
    uint8_t patch;
};

struct ethosu_hw_info {
    struct {
        uint32_t version_status, version_minor, version_major, product_major;
        uint32_t arch_patch_rev, arch_minor_rev, arch_major_rev;
    } version;
    struct {
        uint32_t macs_per_cc, cmd_stream_version, custom_dma, shram_size;
    } cfg;
};

/* ---- Weak hooks: override them in the application ---------------------------------------- */
void ethosu_irq_handler(struct ethosu_driver *drv);
void ethosu_flush_dcache(const uint64_t *base_addr, const size_t *base_addr_size, int num_base_addr);
void ethosu_invalidate_dcache(const uint64_t *base_addr, const size_t *base_addr_size, int num_base_addr);
void *ethosu_mutex_create(void);
void ethosu_mutex_destroy(void *mutex);
int ethosu_mutex_lock(void *mutex);
int ethosu_mutex_unlock(void *mutex);
void *ethosu_semaphore_create(void);
void ethosu_semaphore_destroy(void *sem);
int ethosu_semaphore_take(void *sem, uint64_t timeout);
int ethosu_semaphore_give(void *sem);
void ethosu_inference_begin(struct ethosu_driver *drv, void *user_arg);
void ethosu_inference_end(struct ethosu_driver *drv, void *user_arg);

/* ---- API --------------------------------------------------------------------------------------- */
int ethosu_init(struct ethosu_driver *drv, void *const base_address, const void *fast_memory,
                const size_t fast_memory_size, uint32_t secure_enable, uint32_t privilege_enable);
void ethosu_deinit(struct ethosu_driver *drv);
int ethosu_soft_reset(struct ethosu_driver *drv);
int ethosu_request_power(struct ethosu_driver *drv);
void ethosu_release_power(struct ethosu_driver *drv);
void ethosu_get_driver_version(struct ethosu_driver_version *ver);
void ethosu_get_hw_info(struct ethosu_driver *drv, struct ethosu_hw_info *hw);

int ethosu_invoke_v3(struct ethosu_driver *drv, const void *custom_data_ptr, const int custom_data_size,
                     uint64_t *const base_addr, const size_t *base_addr_size, const int num_base_addr,
                     void *user_arg);
#define ethosu_invoke(drv, custom_data_ptr, custom_data_size, base_addr, base_addr_size, num_base_addr) \
    ethosu_invoke_v3(drv, custom_data_ptr, custom_data_size, base_addr, base_addr_size, num_base_addr, 0)

/* Start a job; follow with ethosu_wait().  0, or a negative code (nothing started). */
int ethosu_invoke_async(struct ethosu_driver *drv, const void *custom_data_ptr, const int custom_data_size,
                        uint64_t *const base_addr, const size_t *base_addr_size, const int num_base_addr,
                        void *user_arg);
/* 1 still running (block=false), 0 done, -2 no job, another negative code on failure. */
int ethosu_wait(struct ethosu_driver *drv, bool block);

struct ethosu_driver *ethosu_reserve_driver(void);
void ethosu_release_driver(struct ethosu_driver *drv);

static inline int ethosu_invoke_v2(const void *custom_data_ptr, const int custom_data_size, uint64_t *const base_addr,
                                   const size_t *base_addr_size, const int num_base_addr)
{
    struct ethosu_driver *drv = ethosu_reserve_driver();
    int result;
    if (drv == NULL) {
        return -1;
    }
    result = ethosu_invoke_v3(drv, custom_data_ptr, custom_data_size, base_addr, base_addr_size, num_base_addr, 0);
    ethosu_release_driver(drv);
    return result;
}

/* ---- mcugen extensions ------------------------------------------------------------------------- */
int mcugen_npu_driver_last_error(const struct ethosu_driver *drv);
uint32_t mcugen_npu_driver_last_status(const struct ethosu_driver *drv);
/* The simulated cycles ethosu_wait() allows a job (default MCUGEN_NPU_DRIVER_TIMEOUT_CYCLES). */
void mcugen_npu_driver_set_timeout(struct ethosu_driver *drv, uint64_t cycles);

#ifdef __cplusplus
}
#endif

#endif /* ETHOSU_DRIVER_H */
