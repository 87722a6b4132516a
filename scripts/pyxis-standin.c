/*
 * A stand-in for NVIDIA's pyxis SPANK plugin, loaded by the Slurm sandbox when
 * SLURM_SANDBOX_PLUGINS names pyxis (scripts/slurm-sandbox.sh builds it with cc).
 *
 * Real sites that run containers under Slurm load pyxis: sbatch, salloc and srun then take
 * --container-image, --container-mounts and the rest. This stand-in takes the same options
 * so that scripts written for such a site run on the sandbox, but it enters no container
 * (there is no enroot here): the step runs on the host. Of pyxis's behaviour it keeps one
 * part a program can see without a container, --container-workdir, the folder the task
 * starts in.
 *
 * No Slurm headers are needed: the few declarations below are SPANK's stable ABI
 * (slurm/spank.h); the one Slurm function it calls, spank_option_register, the
 * program that loads it (srun, sbatch, salloc, slurmstepd) provides.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef int (*spank_opt_cb_f)(int val, const char *optarg, int remote);

struct spank_option {
    char *name;
    char *arginfo;
    char *usage;
    int has_arg;
    int val;
    spank_opt_cb_f cb;
};

const char plugin_name[] = "pyxis";
const char plugin_type[] = "spank";
/* SLURM_VERSION_NUMBER of the Slurm it is loaded into: the build passes it */
const unsigned int plugin_version = SANDBOX_SLURM_VERSION;

static char workdir[4096];

static int ignored(int val, const char *optarg, int remote)
{
    (void)val;
    (void)optarg;
    (void)remote;
    return 0;
}

static int take_workdir(int val, const char *optarg, int remote)
{
    (void)val;
    (void)remote;
    if (optarg == NULL || strlen(optarg) >= sizeof(workdir))
        return -1;
    strcpy(workdir, optarg);
    return 0;
}

/* Registered from slurm_spank_init, as pyxis does, so that sbatch and salloc take them too (a
 * spank_options table reaches srun only). */
static struct spank_option options[] = {
    {"container-image", "[USER@][REGISTRY#]IMAGE[:TAG]|PATH", "[pyxis] the image (stand-in: not entered)", 1, 0, ignored},
    {"container-mounts", "SRC:DST[:FLAGS][,SRC:DST...]", "[pyxis] bind mounts (stand-in: ignored)", 1, 0, ignored},
    {"container-workdir", "PATH", "[pyxis] the folder the task starts in", 1, 0, take_workdir},
    {"container-name", "NAME[:FLAG]", "[pyxis] a named container (stand-in: ignored)", 1, 0, ignored},
    {"container-save", "PATH", "[pyxis] save the container (stand-in: ignored)", 1, 0, ignored},
    {"container-mount-home", NULL, "[pyxis] bind the home folder", 0, 0, ignored},
    {"no-container-mount-home", NULL, "[pyxis] do not bind the home folder", 0, 0, ignored},
    {"container-remap-root", NULL, "[pyxis] root inside the container", 0, 0, ignored},
    {"no-container-remap-root", NULL, "[pyxis] no root inside the container", 0, 0, ignored},
    {"container-entrypoint", NULL, "[pyxis] run the image's entrypoint", 0, 0, ignored},
    {"no-container-entrypoint", NULL, "[pyxis] skip the image's entrypoint", 0, 0, ignored},
    {"container-entrypoint-log", NULL, "[pyxis] print the entrypoint's output", 0, 0, ignored},
    {"container-writable", NULL, "[pyxis] a writable container", 0, 0, ignored},
    {"container-readonly", NULL, "[pyxis] a read-only container", 0, 0, ignored},
    {"container-env", "NAME[,NAME...]", "[pyxis] variables the container keeps", 1, 0, ignored},
    {NULL, NULL, NULL, 0, 0, NULL},
};

extern int spank_option_register(void *sp, struct spank_option *opt);

int slurm_spank_init(void *sp, int ac, char **av)
{
    struct spank_option *opt;
    (void)ac;
    (void)av;
    for (opt = options; opt->name != NULL; opt++) {
        if (spank_option_register(sp, opt) != 0)
            return -1;
    }
    return 0;
}

/* In the task, just before the program starts: where pyxis would start it inside the container. */
int slurm_spank_task_init(void *sp, int ac, char **av)
{
    (void)sp;
    (void)ac;
    (void)av;
    if (workdir[0] != '\0' && chdir(workdir) != 0) {
        fprintf(stderr, "pyxis: cannot change to --container-workdir %s\n", workdir);
        return -1;
    }
    return 0;
}
