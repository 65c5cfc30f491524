/* A PKCS#11 module for PKCS11ProviderTests that forwards every call to SoftHSM2 and adds what real
 * HSMs and cards do and SoftHSM does not: a session limit (C_OpenSession returns CKR_SESSION_COUNT
 * beyond FAULT_SESSION_LIMIT sessions per slot opened through this module), and a token that is pulled out
 * and put back (fault_pull_token(label): the next C_SignInit on that token closes every session of
 * its slot in SoftHSM and returns CKR_DEVICE_REMOVED). Built by the tests with the system C compiler at run time. */
#include <dlfcn.h>
#include <pthread.h>
#include <string.h>
#include <p11-kit/pkcs11.h>

#define FAULT_SESSION_LIMIT 2

static CK_FUNCTION_LIST real;
static CK_FUNCTION_LIST ours;
static int loaded;
#define FAULT_MAX_SLOTS 64
static CK_SLOT_ID slots[FAULT_MAX_SLOTS];
static int open_sessions[FAULT_MAX_SLOTS];
static int slot_count;
static int max_open_sessions;
static int session_count_refusals;
static int pull_token;
static char pull_label[33];
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

/* The counter of `slot` (called with the lock held). */
static int *sessions_of(CK_SLOT_ID slot) {
    for (int index = 0; index < slot_count; index++) if (slots[index] == slot) return &open_sessions[index];
    if (slot_count == FAULT_MAX_SLOTS) return &open_sessions[0];
    slots[slot_count] = slot;
    return &open_sessions[slot_count++];
}

static CK_RV fault_open_session(CK_SLOT_ID slot, CK_FLAGS flags, void *application, CK_NOTIFY notify, CK_SESSION_HANDLE_PTR session) {
    pthread_mutex_lock(&lock);
    int *open = sessions_of(slot);
    if (*open >= FAULT_SESSION_LIMIT) {
        session_count_refusals++;
        pthread_mutex_unlock(&lock);
        return CKR_SESSION_COUNT;
    }
    CK_RV rv = real.C_OpenSession(slot, flags, application, notify, session);
    if (rv == CKR_OK) {
        (*open)++;
        if (*open > max_open_sessions) max_open_sessions = *open;
    }
    pthread_mutex_unlock(&lock);
    return rv;
}

static CK_RV fault_close_session(CK_SESSION_HANDLE session) {
    CK_SESSION_INFO info;
    CK_RV known = real.C_GetSessionInfo(session, &info);
    CK_RV rv = real.C_CloseSession(session);
    pthread_mutex_lock(&lock);
    if (rv == CKR_OK && known == CKR_OK) {
        int *open = sessions_of(info.slotID);
        if (*open > 0) (*open)--;
    }
    pthread_mutex_unlock(&lock);
    return rv;
}

/* Whether the token of `session` has the label given to fault_pull_token (blank-padded in PKCS#11). */
static int is_pulled_token(CK_SESSION_HANDLE session, CK_SESSION_INFO *info) {
    CK_TOKEN_INFO token;
    if (real.C_GetSessionInfo(session, info) != CKR_OK || real.C_GetTokenInfo(info->slotID, &token) != CKR_OK) return 0;
    char label[33];
    memcpy(label, token.label, 32);
    label[32] = '\0';
    for (int index = 31; index >= 0 && label[index] == ' '; index--) label[index] = '\0';
    return strcmp(label, pull_label) == 0;
}

static CK_RV fault_sign_init(CK_SESSION_HANDLE session, CK_MECHANISM_PTR mechanism, CK_OBJECT_HANDLE key) {
    CK_SESSION_INFO info;
    pthread_mutex_lock(&lock);
    int pulled = pull_token && is_pulled_token(session, &info);
    if (pulled) pull_token = 0;
    pthread_mutex_unlock(&lock);
    if (pulled) {
        real.C_CloseAllSessions(info.slotID);
        pthread_mutex_lock(&lock);
        *sessions_of(info.slotID) = 0;
        pthread_mutex_unlock(&lock);
        return CKR_DEVICE_REMOVED;
    }
    return real.C_SignInit(session, mechanism, key);
}

CK_RV C_GetFunctionList(CK_FUNCTION_LIST_PTR_PTR list) {
    if (!loaded) {
        void *softhsm = dlopen("/usr/lib/softhsm/libsofthsm2.so", RTLD_NOW | RTLD_LOCAL);
        if (softhsm == NULL) return CKR_GENERAL_ERROR;
        CK_C_GetFunctionList get = (CK_C_GetFunctionList)dlsym(softhsm, "C_GetFunctionList");
        CK_FUNCTION_LIST_PTR functions = NULL;
        if (get == NULL || get(&functions) != CKR_OK) return CKR_GENERAL_ERROR;
        real = *functions;
        ours = real;
        ours.C_OpenSession = fault_open_session;
        ours.C_CloseSession = fault_close_session;
        ours.C_SignInit = fault_sign_init;
        loaded = 1;
    }
    *list = &ours;
    return CKR_OK;
}

/* Test controls. */
void fault_pull_token(const char *label) {
    pthread_mutex_lock(&lock);
    strncpy(pull_label, label, 32);
    pull_label[32] = '\0';
    pull_token = 1;
    pthread_mutex_unlock(&lock);
}
int fault_max_open_sessions(void) { return max_open_sessions; }
int fault_session_count_refusals(void) { return session_count_refusals; }
