/* rusage OUT CMD [ARG...]: runs CMD and writes its resource use to OUT, in the lines of GNU
 * time -v that bench/run.sh reads ("User time (seconds): ...", "System time (seconds): ...",
 * "Maximum resident set size (kbytes): ..."), but with microseconds: GNU time prints CPU times
 * in hundredths of a second, a quarter of the figure for a 40 ms run. Like GNU time it counts
 * the command and the descendants it waited for (wait4). Exits with the command's status. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: rusage OUT CMD [ARG...]\n");
        return 2;
    }
    pid_t pid = fork();
    if (pid < 0) {
        perror("rusage: fork");
        return 2;
    }
    if (pid == 0) {
        execvp(argv[2], argv + 2);
        perror("rusage: exec");
        _exit(127);
    }
    int status = 0;
    struct rusage ru;
    while (wait4(pid, &status, 0, &ru) < 0) {
        if (errno == EINTR) continue;
        perror("rusage: wait4");
        return 2;
    }
    FILE *f = fopen(argv[1], "w");
    if (!f) {
        perror(argv[1]);
        return 2;
    }
    fprintf(f, "User time (seconds): %ld.%06ld\n", (long)ru.ru_utime.tv_sec,
            (long)ru.ru_utime.tv_usec);
    fprintf(f, "System time (seconds): %ld.%06ld\n", (long)ru.ru_stime.tv_sec,
            (long)ru.ru_stime.tv_usec);
    fprintf(f, "Maximum resident set size (kbytes): %ld\n", ru.ru_maxrss);
    fprintf(f, "Exit status: %d\n", WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
    if (fclose(f) != 0) {
        perror(argv[1]);
        return 2;
    }
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}
