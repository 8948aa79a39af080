/*
 * mcugen_npu_driver.c - mcugen's own Ethos-U driver (API shape of Arm's ethos-u-core-driver)
 * for the simulated device in mcugen_npu_device.c.  It programs the device only through its
 * registers: parse the 'COP1' payload, check CONFIG and ID against the device, reset, program
 * QBASE/QSIZE/BASEPn/REGIONCFG (and the model-only region sizes), start, wait, decode STATUS.
 * No malloc: semaphores come from a small static pool.
 */
#include "ethosu_driver.h"

#include <string.h>

#include "mcugen_npu_device.h"

#if defined(__GNUC__) || defined(__clang__) || defined(__ARMCC_VERSION)
#define MCUGEN_NPU_WEAK __attribute__((weak))
#else
#define MCUGEN_NPU_WEAK
#endif

#define COP1_FOURCC 0x31504F43u /* 'C' 'O' 'P' '1', little-endian */
#define DA_CONFIG 1u
#define DA_COMMAND_STREAM 2u
#define DA_NOP 5u
#define FAST_MEMORY_INDEX 2
#define POLL_COMMANDS 64u /* device commands per slice of ethosu_wait() (timeout granularity) */

#ifndef MCUGEN_NPU_REGIONCFG
/* region 0 (weights, flash) on AXI1, the rest on AXI0 */
#define MCUGEN_NPU_REGIONCFG 0x0003u
#endif

#ifndef MCUGEN_NPU_DRIVER_MAX_SEMAPHORES
#define MCUGEN_NPU_DRIVER_MAX_SEMAPHORES 8
#endif

static int result(int code)
{
#ifdef MCUGEN_NPU_DRIVER_MINUS_ONE_ON_ERROR
    return code < 0 && code != MCUGEN_NPU_ERR_NOT_INVOKED ? -1 : code;
#else
    return code;
#endif
}

/* ---- Weak hooks -------------------------------------------------------------------------------- */

MCUGEN_NPU_WEAK void ethosu_flush_dcache(const uint64_t *base_addr, const size_t *base_addr_size, int num_base_addr)
{
    (void)base_addr;
    (void)base_addr_size;
    (void)num_base_addr;
}

MCUGEN_NPU_WEAK void ethosu_invalidate_dcache(const uint64_t *base_addr, const size_t *base_addr_size,
                                              int num_base_addr)
{
    (void)base_addr;
    (void)base_addr_size;
    (void)num_base_addr;
}

MCUGEN_NPU_WEAK void *ethosu_mutex_create(void)
{
    static uint8_t placeholder;
    return &placeholder;
}

MCUGEN_NPU_WEAK void ethosu_mutex_destroy(void *mutex)
{
    (void)mutex;
}

MCUGEN_NPU_WEAK int ethosu_mutex_lock(void *mutex)
{
    (void)mutex;
    return 0;
}

MCUGEN_NPU_WEAK int ethosu_mutex_unlock(void *mutex)
{
    (void)mutex;
    return 0;
}

struct sem_slot {
    uint8_t used;
    uint32_t count;
};

static struct sem_slot sem_pool[MCUGEN_NPU_DRIVER_MAX_SEMAPHORES];

MCUGEN_NPU_WEAK void *ethosu_semaphore_create(void)
{
    int i;
    for (i = 0; i < MCUGEN_NPU_DRIVER_MAX_SEMAPHORES; ++i) {
        if (!sem_pool[i].used) {
            sem_pool[i].used = 1;
            sem_pool[i].count = 0;
            return &sem_pool[i];
        }
    }
    return NULL;
}

MCUGEN_NPU_WEAK void ethosu_semaphore_destroy(void *sem)
{
    if (sem != NULL) {
        ((struct sem_slot *)sem)->used = 0;
    }
}

/* Bare metal, single thread: nothing else can give the semaphore while we wait, so an empty
 * semaphore is a timeout at once rather than a hang. */
MCUGEN_NPU_WEAK int ethosu_semaphore_take(void *sem, uint64_t timeout)
{
    struct sem_slot *s = (struct sem_slot *)sem;
    (void)timeout;
    if (s == NULL || s->count == 0u) {
        return -1;
    }
    s->count--;
    return 0;
}

MCUGEN_NPU_WEAK int ethosu_semaphore_give(void *sem)
{
    struct sem_slot *s = (struct sem_slot *)sem;
    if (s == NULL) {
        return -1;
    }
    s->count++;
    return 0;
}

MCUGEN_NPU_WEAK void ethosu_inference_begin(struct ethosu_driver *drv, void *user_arg)
{
    (void)drv;
    (void)user_arg;
}

MCUGEN_NPU_WEAK void ethosu_inference_end(struct ethosu_driver *drv, void *user_arg)
{
    (void)drv;
    (void)user_arg;
}

/* ---- Device access --------------------------------------------------------------------------- */

static void wr(struct ethosu_driver *drv, uint32_t offset, uint32_t value)
{
    mcugen_npu_write_reg(drv->dev, offset, value);
}

static uint32_t rd(struct ethosu_driver *drv, uint32_t offset)
{
    return mcugen_npu_read_reg(drv->dev, offset);
}

/* STATUS (and the model's fault register) at the end of a job, as a result code. */
static int decode_status(uint32_t status, uint32_t fault)
{
    if (status & MCUGEN_NPU_STATUS_WD_FAULT) {
        return MCUGEN_NPU_ERR_WATCHDOG;
    }
    if (status & MCUGEN_NPU_STATUS_BUS_STATUS) {
        return fault == MCUGEN_NPU_FAULT_DMA_RANGE ? MCUGEN_NPU_ERR_DMA_FAULT : MCUGEN_NPU_ERR_BUS_FAULT;
    }
    if (status & MCUGEN_NPU_STATUS_CMD_PARSE_ERR) {
        switch (fault) {
        case MCUGEN_NPU_FAULT_TRUNCATED_CMD1: return MCUGEN_NPU_ERR_CMD_TRUNCATED;
        case MCUGEN_NPU_FAULT_NO_STOP: return MCUGEN_NPU_ERR_CMD_NO_STOP;
        case MCUGEN_NPU_FAULT_UNSUPPORTED: return MCUGEN_NPU_ERR_CMD_UNSUPPORTED;
        case MCUGEN_NPU_FAULT_ENGINE: return MCUGEN_NPU_ERR_ENGINE;
        default: return MCUGEN_NPU_ERR_CMD_INVALID;
        }
    }
    if ((status & (MCUGEN_NPU_STATUS_ECC_FAULT)) || !(status & MCUGEN_NPU_STATUS_CMD_END)) {
        return MCUGEN_NPU_ERR_GENERIC;
    }
    return MCUGEN_NPU_OK;
}

MCUGEN_NPU_WEAK void ethosu_irq_handler(struct ethosu_driver *drv)
{
    uint32_t status;
    if (drv->job.state != ETHOSU_JOB_RUNNING || drv->job.result == ETHOSU_JOB_RESULT_TIMEOUT) {
        return;
    }
    status = rd(drv, MCUGEN_NPU_REG_STATUS);
    if (status & MCUGEN_NPU_STATUS_STATE_RUNNING) {
        /* NPU_OP_IRQ from a running stream: acknowledge and keep going */
        wr(drv, MCUGEN_NPU_REG_CMD, rd(drv, MCUGEN_NPU_REG_CMD) | MCUGEN_NPU_CMD_CLEAR_IRQ);
        return;
    }
    drv->last_status = status;
    drv->last_error = decode_status(status, rd(drv, MCUGEN_NPU_REG_MODEL_FAULT));
    wr(drv, MCUGEN_NPU_REG_CMD, rd(drv, MCUGEN_NPU_REG_CMD) | MCUGEN_NPU_CMD_CLEAR_IRQ);
    drv->job.result = drv->last_error == MCUGEN_NPU_OK ? ETHOSU_JOB_RESULT_OK : ETHOSU_JOB_RESULT_ERROR;
    drv->job.state = ETHOSU_JOB_DONE;
    ethosu_semaphore_give(drv->semaphore);
}

static void irq_line(struct mcugen_npu_device *dev, void *ctx)
{
    (void)dev;
    ethosu_irq_handler((struct ethosu_driver *)ctx);
}

/* ---- Driver registry ---------------------------------------------------------------------------- */

static struct ethosu_driver *registered;
static void *global_mutex;
static void *global_semaphore;

static void reset_job(struct ethosu_driver *drv)
{
    memset(&drv->job, 0, sizeof drv->job);
}

int ethosu_soft_reset(struct ethosu_driver *drv)
{
    uint32_t pending = (drv->privileged ? MCUGEN_NPU_RESET_PENDING_CPL : 0u) |
                       (drv->secure ? MCUGEN_NPU_RESET_PENDING_CSL : 0u);
    uint32_t prot;
    wr(drv, MCUGEN_NPU_REG_RESET, pending);
    if (rd(drv, MCUGEN_NPU_REG_STATUS) & MCUGEN_NPU_STATUS_RESET_STATUS) {
        return -1;
    }
    prot = rd(drv, MCUGEN_NPU_REG_PROT);
    if ((prot & MCUGEN_NPU_PROT_ACTIVE_CPL) != (pending & MCUGEN_NPU_RESET_PENDING_CPL) ||
        ((prot & MCUGEN_NPU_PROT_ACTIVE_CSL) != 0u) != ((pending & MCUGEN_NPU_RESET_PENDING_CSL) != 0u)) {
        return -1;
    }
    wr(drv, MCUGEN_NPU_REG_QCONFIG, 0u);
    wr(drv, MCUGEN_NPU_REG_REGIONCFG, MCUGEN_NPU_REGIONCFG);
    wr(drv, MCUGEN_NPU_REG_CMD, drv->power_request_counter > 0u ? 0u
                                    : MCUGEN_NPU_CMD_CLOCK_Q_ENABLE | MCUGEN_NPU_CMD_POWER_Q_ENABLE);
    return 0;
}

int ethosu_request_power(struct ethosu_driver *drv)
{
    if (drv->power_request_counter++ == 0u) {
        if (ethosu_soft_reset(drv) != 0) {
            drv->power_request_counter--;
            return -1;
        }
        wr(drv, MCUGEN_NPU_REG_CMD, 0u); /* Q-channel gating off while in use */
    }
    return 0;
}

void ethosu_release_power(struct ethosu_driver *drv)
{
    if (drv->power_request_counter > 0u && --drv->power_request_counter == 0u) {
        wr(drv, MCUGEN_NPU_REG_CMD, MCUGEN_NPU_CMD_CLOCK_Q_ENABLE | MCUGEN_NPU_CMD_POWER_Q_ENABLE);
    }
}

int ethosu_init(struct ethosu_driver *drv, void *const base_address, const void *fast_memory,
                const size_t fast_memory_size, uint32_t secure_enable, uint32_t privilege_enable)
{
    struct mcugen_npu_device *dev = mcugen_npu_device_find(base_address);
    if (drv == NULL || dev == NULL) {
        return -1;
    }
    if (global_mutex == NULL && (global_mutex = ethosu_mutex_create()) == NULL) {
        return -1;
    }
    if (global_semaphore == NULL && (global_semaphore = ethosu_semaphore_create()) == NULL) {
        return -1;
    }
    memset(drv, 0, sizeof *drv);
    drv->dev = dev;
    drv->fast_memory = (uint64_t)(uintptr_t)fast_memory;
    drv->fast_memory_size = fast_memory_size;
    drv->secure = secure_enable;
    drv->privileged = privilege_enable;
    drv->timeout_cycles = MCUGEN_NPU_DRIVER_TIMEOUT_CYCLES;
    drv->semaphore = ethosu_semaphore_create();
    if (drv->semaphore == NULL) {
        return -1;
    }
    if (ethosu_soft_reset(drv) != 0) {
        ethosu_semaphore_destroy(drv->semaphore);
        return -1;
    }
    mcugen_npu_set_irq(dev, irq_line, drv);
    ethosu_mutex_lock(global_mutex);
    drv->next = registered;
    registered = drv;
    ethosu_mutex_unlock(global_mutex);
    ethosu_semaphore_give(global_semaphore);
    return 0;
}

void ethosu_deinit(struct ethosu_driver *drv)
{
    struct ethosu_driver **link;
    if (drv == NULL) {
        return;
    }
    ethosu_mutex_lock(global_mutex);
    for (link = &registered; *link != NULL; link = &(*link)->next) {
        if (*link == drv) {
            *link = drv->next;
            ethosu_semaphore_take(global_semaphore, ETHOSU_SEMAPHORE_WAIT_FOREVER);
            break;
        }
    }
    ethosu_mutex_unlock(global_mutex);
    if (drv->dev != NULL) {
        mcugen_npu_set_irq(drv->dev, NULL, NULL);
    }
    ethosu_semaphore_destroy(drv->semaphore);
    drv->semaphore = NULL;
    drv->dev = NULL;
}

void ethosu_get_driver_version(struct ethosu_driver_version *ver)
{
    ver->major = ETHOSU_DRIVER_VERSION_MAJOR;
    ver->minor = ETHOSU_DRIVER_VERSION_MINOR;
    ver->patch = ETHOSU_DRIVER_VERSION_PATCH;
}

void ethosu_get_hw_info(struct ethosu_driver *drv, struct ethosu_hw_info *hw)
{
    uint32_t id = rd(drv, MCUGEN_NPU_REG_ID), cfg = rd(drv, MCUGEN_NPU_REG_CONFIG);
    hw->version.version_status = id & 0xFu;
    hw->version.version_minor = (id >> 4) & 0xFu;
    hw->version.version_major = (id >> 8) & 0xFu;
    hw->version.product_major = MCUGEN_NPU_ID_PRODUCT(id);
    hw->version.arch_patch_rev = MCUGEN_NPU_ID_ARCH_PATCH(id);
    hw->version.arch_minor_rev = MCUGEN_NPU_ID_ARCH_MINOR(id);
    hw->version.arch_major_rev = MCUGEN_NPU_ID_ARCH_MAJOR(id);
    hw->cfg.macs_per_cc = MCUGEN_NPU_CONFIG_MACS_LOG2(cfg);
    hw->cfg.cmd_stream_version = MCUGEN_NPU_CONFIG_CMD_VERSION(cfg);
    hw->cfg.custom_dma = 0;
    hw->cfg.shram_size = MCUGEN_NPU_CONFIG_SHRAM_KB(cfg);
}

/* ---- Invoke ----------------------------------------------------------------------------------------- */

static uint32_t payload_word(const void *payload, int index)
{
    const uint8_t *p = (const uint8_t *)payload + 4 * index;
    return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) | ((uint32_t)p[3] << 24);
}

/* The payload's CONFIG and ID words against the device's, as Arm's driver checks them. */
static int check_config(struct ethosu_driver *drv, uint32_t cfg, uint32_t id)
{
    uint32_t hw_cfg = rd(drv, MCUGEN_NPU_REG_CONFIG), hw_id = rd(drv, MCUGEN_NPU_REG_ID);
    if (MCUGEN_NPU_CONFIG_MACS_LOG2(cfg) != MCUGEN_NPU_CONFIG_MACS_LOG2(hw_cfg) ||
        MCUGEN_NPU_CONFIG_SHRAM_KB(cfg) != MCUGEN_NPU_CONFIG_SHRAM_KB(hw_cfg) ||
        MCUGEN_NPU_CONFIG_CMD_VERSION(cfg) != MCUGEN_NPU_CONFIG_CMD_VERSION(hw_cfg) ||
        MCUGEN_NPU_CONFIG_PRODUCT(cfg) != MCUGEN_NPU_CONFIG_PRODUCT(hw_cfg)) {
        return MCUGEN_NPU_ERR_CONFIG_MISMATCH;
    }
    if (MCUGEN_NPU_ID_ARCH_MAJOR(id) != MCUGEN_NPU_ID_ARCH_MAJOR(hw_id) ||
        MCUGEN_NPU_ID_ARCH_MINOR(id) > MCUGEN_NPU_ID_ARCH_MINOR(hw_id)) {
        return MCUGEN_NPU_ERR_ARCH_MISMATCH;
    }
    return MCUGEN_NPU_OK;
}

static int fail(struct ethosu_driver *drv, int code)
{
    drv->last_error = code;
    reset_job(drv);
    return result(code);
}

int ethosu_invoke_async(struct ethosu_driver *drv, const void *custom_data_ptr, const int custom_data_size,
                        uint64_t *const base_addr, const size_t *base_addr_size, const int num_base_addr,
                        void *user_arg)
{
    const uint8_t *stream = NULL;
    uint32_t stream_words = 0;
    int words, i, code;
    if (drv == NULL || drv->dev == NULL) {
        return result(MCUGEN_NPU_ERR_GENERIC);
    }
    if (drv->job.state != ETHOSU_JOB_IDLE) {
        return result(MCUGEN_NPU_ERR_GENERIC); /* a job is running or not yet collected */
    }
    drv->last_status = 0;
    drv->last_error = MCUGEN_NPU_OK;
    if (num_base_addr < 0 || num_base_addr > (int)MCUGEN_NPU_NUM_REGIONS ||
        (num_base_addr > 0 && base_addr == NULL)) {
        return fail(drv, MCUGEN_NPU_ERR_GENERIC);
    }
    if (custom_data_ptr == NULL || custom_data_size < 4 || custom_data_size % 4 != 0 ||
        payload_word(custom_data_ptr, 0) != COP1_FOURCC) {
        return fail(drv, MCUGEN_NPU_ERR_BAD_MAGIC);
    }
    words = custom_data_size / 4;
    for (i = 1; i < words;) {
        uint32_t w = payload_word(custom_data_ptr, i);
        switch (w & 0xFFu) {
        case DA_CONFIG:
            if (i + 3 > words) {
                return fail(drv, MCUGEN_NPU_ERR_BAD_PAYLOAD);
            }
            code = check_config(drv, payload_word(custom_data_ptr, i + 1), payload_word(custom_data_ptr, i + 2));
            if (code != MCUGEN_NPU_OK) {
                return fail(drv, code);
            }
            i += 3;
            break;
        case DA_COMMAND_STREAM: {
            uint32_t length = (((w >> 8) & 0xFFu) << 16) | (w >> 16);
            if (stream != NULL || length > (uint32_t)(words - i - 1)) {
                return fail(drv, MCUGEN_NPU_ERR_BAD_PAYLOAD);
            }
            stream = (const uint8_t *)custom_data_ptr + 4 * (i + 1);
            stream_words = length;
            i += 1 + (int)length;
            break;
        }
        case DA_NOP:
            i += 1;
            break;
        default:
            return fail(drv, MCUGEN_NPU_ERR_BAD_PAYLOAD);
        }
    }
    if (stream == NULL) {
        return fail(drv, MCUGEN_NPU_ERR_BAD_PAYLOAD);
    }
    if (((uintptr_t)stream & 15u) != 0u) {
        return fail(drv, MCUGEN_NPU_ERR_ALIGNMENT);
    }
    for (i = 0; i < num_base_addr; ++i) {
        if ((base_addr[i] & 15u) != 0u) {
            return fail(drv, MCUGEN_NPU_ERR_ALIGNMENT);
        }
    }
    if (drv->fast_memory != 0u && num_base_addr > FAST_MEMORY_INDEX) {
        if (base_addr_size != NULL && base_addr_size[FAST_MEMORY_INDEX] > drv->fast_memory_size) {
            return fail(drv, MCUGEN_NPU_ERR_GENERIC);
        }
        base_addr[FAST_MEMORY_INDEX] = drv->fast_memory;
    }

    drv->job.custom_data_ptr = custom_data_ptr;
    drv->job.custom_data_size = custom_data_size;
    drv->job.base_addr = base_addr;
    drv->job.base_addr_size = base_addr_size;
    drv->job.num_base_addr = num_base_addr;
    drv->job.user_arg = user_arg;
    drv->job.result = ETHOSU_JOB_RESULT_OK;

    ethosu_flush_dcache(base_addr, base_addr_size, num_base_addr);
    if (ethosu_request_power(drv) != 0) {
        return fail(drv, MCUGEN_NPU_ERR_GENERIC);
    }
    wr(drv, MCUGEN_NPU_REG_QBASE, (uint32_t)((uint64_t)(uintptr_t)stream & 0xFFFFFFFFu));
    wr(drv, MCUGEN_NPU_REG_QBASE_HI, (uint32_t)((uint64_t)(uintptr_t)stream >> 32));
    wr(drv, MCUGEN_NPU_REG_QSIZE, stream_words * 4u);
    for (i = 0; i < (int)MCUGEN_NPU_NUM_REGIONS; ++i) {
        uint64_t addr = i < num_base_addr ? base_addr[i] : 0u;
        uint32_t size = 0;
        if (i < num_base_addr) {
            size = base_addr_size == NULL ? MCUGEN_NPU_REGION_SIZE_UNCHECKED
                   : base_addr_size[i] >= MCUGEN_NPU_REGION_SIZE_UNCHECKED ? MCUGEN_NPU_REGION_SIZE_UNCHECKED - 1u
                                                                         : (uint32_t)base_addr_size[i];
        }
        wr(drv, MCUGEN_NPU_REG_BASEP(i), (uint32_t)(addr & 0xFFFFFFFFu));
        wr(drv, MCUGEN_NPU_REG_BASEP_HI(i), (uint32_t)(addr >> 32));
        wr(drv, MCUGEN_NPU_REG_MODEL_REGION_SIZE(i), size);
    }
    drv->job.state = ETHOSU_JOB_RUNNING;
    ethosu_inference_begin(drv, user_arg);
    wr(drv, MCUGEN_NPU_REG_CMD, rd(drv, MCUGEN_NPU_REG_CMD) | MCUGEN_NPU_CMD_TRANSITION_TO_RUN);
    return 0;
}

static uint64_t run_cycles(struct ethosu_driver *drv)
{
    return (uint64_t)rd(drv, MCUGEN_NPU_REG_MODEL_CYCLES_LO) | ((uint64_t)rd(drv, MCUGEN_NPU_REG_MODEL_CYCLES_HI) << 32);
}

int ethosu_wait(struct ethosu_driver *drv, bool block)
{
    int code;
    if (drv == NULL || drv->dev == NULL) {
        return result(MCUGEN_NPU_ERR_GENERIC);
    }
    if (drv->job.state == ETHOSU_JOB_IDLE) {
        return MCUGEN_NPU_ERR_NOT_INVOKED;
    }
    /* Simulated time passes while the CPU waits: the device runs in slices. */
    if (drv->job.state == ETHOSU_JOB_RUNNING) {
        if (!block) {
            mcugen_npu_step(drv->dev, POLL_COMMANDS);
            if (drv->job.state == ETHOSU_JOB_RUNNING) {
                return 1;
            }
        }
        while (drv->job.state == ETHOSU_JOB_RUNNING && run_cycles(drv) < drv->timeout_cycles) {
            if (!mcugen_npu_step(drv->dev, POLL_COMMANDS) && drv->job.state == ETHOSU_JOB_RUNNING) {
                break; /* stopped without an interrupt reaching us */
            }
        }
    }
    if (ethosu_semaphore_take(drv->semaphore, ETHOSU_SEMAPHORE_WAIT_INFERENCE) < 0) {
        drv->job.result = ETHOSU_JOB_RESULT_TIMEOUT;
        drv->last_status = rd(drv, MCUGEN_NPU_REG_STATUS);
        drv->last_error = MCUGEN_NPU_ERR_TIMEOUT;
    }
    ethosu_inference_end(drv, drv->job.user_arg);
    ethosu_release_power(drv);
    code = drv->last_error;
    if (drv->job.result != ETHOSU_JOB_RESULT_OK) {
        (void)ethosu_soft_reset(drv); /* a faulted or timed-out NPU needs a reset */
    } else {
        ethosu_invalidate_dcache(drv->job.base_addr, drv->job.base_addr_size, drv->job.num_base_addr);
        code = MCUGEN_NPU_OK;
    }
    reset_job(drv);
    return result(code);
}

int ethosu_invoke_v3(struct ethosu_driver *drv, const void *custom_data_ptr, const int custom_data_size,
                     uint64_t *const base_addr, const size_t *base_addr_size, const int num_base_addr,
                     void *user_arg)
{
    int code = ethosu_invoke_async(drv, custom_data_ptr, custom_data_size, base_addr, base_addr_size,
                                   num_base_addr, user_arg);
    if (code != 0) {
        return code;
    }
    return ethosu_wait(drv, true);
}

struct ethosu_driver *ethosu_reserve_driver(void)
{
    struct ethosu_driver *drv;
    if (global_semaphore == NULL || ethosu_semaphore_take(global_semaphore, ETHOSU_SEMAPHORE_WAIT_FOREVER) < 0) {
        return NULL;
    }
    ethosu_mutex_lock(global_mutex);
    for (drv = registered; drv != NULL; drv = drv->next) {
        if (!drv->reserved) {
            drv->reserved = true;
            break;
        }
    }
    ethosu_mutex_unlock(global_mutex);
    return drv;
}

void ethosu_release_driver(struct ethosu_driver *drv)
{
    if (drv == NULL) {
        return;
    }
    ethosu_mutex_lock(global_mutex);
    if (drv->reserved) {
        if (drv->job.state != ETHOSU_JOB_IDLE && ethosu_wait(drv, false) == 1) {
            /* still running: stop it */
            drv->power_request_counter = 0;
            (void)ethosu_soft_reset(drv);
            reset_job(drv);
        }
        drv->reserved = false;
        ethosu_semaphore_give(global_semaphore);
    }
    ethosu_mutex_unlock(global_mutex);
}

int mcugen_npu_driver_last_error(const struct ethosu_driver *drv)
{
    return drv->last_error;
}

uint32_t mcugen_npu_driver_last_status(const struct ethosu_driver *drv)
{
    return drv->last_status;
}

void mcugen_npu_driver_set_timeout(struct ethosu_driver *drv, uint64_t cycles)
{
    drv->timeout_cycles = cycles;
}
