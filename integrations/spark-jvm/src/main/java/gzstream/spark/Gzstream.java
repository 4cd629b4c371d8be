package gzstream.spark;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.spark.TaskContext;

/**
 * The gzstream command line, as the data source runs it: two commands and nothing else of
 * gzstream, the same two the Python {@code gzidx} source runs.
 *
 * <ul>
 *   <li>{@code gzstream index --plan SIZE --json FILE} on the driver: the splits of one file,
 *       each starting at an access point of its index, about SIZE plain bytes each, after
 *       gzstream has checked the index against the file (stale, foreign, or writable by another
 *       user: one line on standard error and a non-zero exit).
 *   <li>{@code gzstream unpack -c -p T --offset N [--length M] --whole-lines [--index PATH] -- FILE}
 *       in a task: the lines that start in plain bytes [N, N+M), Hadoop's LineRecordReader rule,
 *       so that the splits of one plan, read one after the other, give every line once, decoded
 *       on T threads (the task's cores; see {@link #taskThreads}).
 * </ul>
 *
 * <p>Stateless; every method is safe to call from any thread.
 */
final class Gzstream {
    private Gzstream() {}

    private static final Pattern SIZE = Pattern.compile("\\s*(\\d+)\\s*([kKmMgGtT]?)\\s*");
    private static final Pattern WHOLE_NUMBER = Pattern.compile("\\s*(\\d{1,9})\\s*");

    /** The thread counts {@code gzstream unpack -p} accepts. */
    static final int MIN_THREADS = 1;
    static final int MAX_THREADS = 256;

    /**
     * Reads a byte count as gzstream's CLI and the Python source do: digits with an optional
     * binary suffix, {@code "4096"}, {@code "64k"}, {@code "128m"}, {@code "1g"}, {@code "1t"}
     * (KiB, MiB, GiB, TiB; either case).
     *
     * @return the count in bytes, at least 1
     * @throws IllegalArgumentException naming the text when it is not such a size, is 0, or
     *     does not fit in a long
     */
    static long parseSize(String text) {
        Matcher match = SIZE.matcher(String.valueOf(text));
        if (!match.matches()) {
            throw new IllegalArgumentException(
                "splitSize takes a size in bytes such as 128m, 1g or 1048576, not '" + text + "'");
        }
        int shift = switch (match.group(2).toLowerCase(Locale.ROOT)) {
            case "k" -> 10;
            case "m" -> 20;
            case "g" -> 30;
            case "t" -> 40;
            default -> 0;
        };
        long size;
        try {
            long digits = Long.parseLong(match.group(1));
            if (digits > (Long.MAX_VALUE >> shift)) {
                throw new NumberFormatException();
            }
            size = digits << shift;
        } catch (NumberFormatException tooLarge) {
            throw new IllegalArgumentException("splitSize is too large: '" + text + "'");
        }
        if (size < 1) {
            throw new IllegalArgumentException("splitSize must be at least 1 byte, not '" + text + "'");
        }
        return size;
    }

    /**
     * Reads the {@code threads} option, as the Python source does: how many threads each task's
     * gzstream decodes on, a whole number from 1 to 256 (the range {@code gzstream unpack -p}
     * takes).
     *
     * @throws IllegalArgumentException naming the text when it is not such a number
     */
    static int parseThreads(String text) {
        Matcher match = WHOLE_NUMBER.matcher(String.valueOf(text));
        int threads = match.matches() ? Integer.parseInt(match.group(1)) : 0;
        if (threads < MIN_THREADS || threads > MAX_THREADS) {
            throw new IllegalArgumentException(
                "threads takes a whole number from " + MIN_THREADS + " to " + MAX_THREADS + ", not '" + text + "'");
        }
        return threads;
    }

    /**
     * The threads one task's gzstream decodes on: {@code option} when set, else the cores Spark
     * gave the task ({@code TaskContext.cpus()}, that is {@code spark.task.cpus}, 1 by default;
     * at most 256). Spark runs as many tasks at once as an executor has cores for them, so a
     * gzstream left to its own default would decode on every core of the machine in each task
     * (16 task slots, 16 × 16 threads).
     *
     * @param option the {@code threads} option, or {@code null}
     * @return the count, or {@code null} outside a Spark task without the option (then
     *     {@code -p} is left out: gzstream's default, every core)
     */
    static Integer taskThreads(Integer option) {
        if (option != null) {
            return option;
        }
        TaskContext context = TaskContext.get();
        if (context == null) {
            return null;
        }
        return Math.max(MIN_THREADS, Math.min(MAX_THREADS, context.cpus()));
    }

    /**
     * The gzstream to run: {@code option} when given, else {@code $GZSTREAM}, else {@code gzstream}
     * on {@code PATH}; resolved where it runs (driver or executor), as each machine's PATH and
     * environment differ. A name with a slash is a path; one without is looked up on PATH.
     *
     * @throws GzstreamException when none of them names an executable file
     */
    static String resolveBinary(String option) {
        String candidate = option;
        if (candidate == null || candidate.isEmpty()) {
            candidate = System.getenv("GZSTREAM");
        }
        if (candidate == null || candidate.isEmpty()) {
            candidate = "gzstream";
        }
        String found = null;
        if (candidate.contains("/")) {
            if (isExecutableFile(Path.of(candidate))) {
                found = Path.of(candidate).toAbsolutePath().toString();
            }
        } else {
            String path = System.getenv("PATH");
            for (String folder : (path == null ? "" : path).split(File.pathSeparator)) {
                Path file = Path.of(folder.isEmpty() ? "." : folder, candidate);
                if (isExecutableFile(file)) {
                    found = file.toAbsolutePath().toString();
                    break;
                }
            }
        }
        if (found == null) {
            throw new GzstreamException("gzstream not found: '" + candidate + "' is not an executable (set the "
                + "data source's 'gzstream' option or $GZSTREAM, or put gzstream on PATH on every executor)");
        }
        return found;
    }

    private static boolean isExecutableFile(Path file) {
        return Files.isRegularFile(file) && Files.isExecutable(file);
    }

    /** {@code index --plan SIZE --json -- FILE}: one JSON object on standard output. */
    static List<String> planArguments(String binary, String file, long splitSize) {
        return List.of(binary, "index", "--plan", Long.toString(splitSize), "--json", "--", file);
    }

    /**
     * The unpack command line that writes one split's whole lines to standard output.
     *
     * @param threads {@code -p}, the threads gzstream decodes the split's spans on, or
     *     {@code null} to leave it out (gzstream's default: every core)
     */
    static List<String> unpackArguments(String binary, GzipSplit split, Integer threads) {
        List<String> arguments = new ArrayList<>(List.of(binary, "unpack", "-c"));
        if (threads != null) {
            arguments.add("-p");
            arguments.add(threads.toString());
        }
        arguments.add("--offset");
        arguments.add(Long.toString(split.offset()));
        if (split.length() >= 0) {
            arguments.add("--length");
            arguments.add(Long.toString(split.length()));
        }
        arguments.add("--whole-lines");
        if (split.index() != null) {
            arguments.add("--index");
            arguments.add(split.index());
        }
        // "--" ends the options, so that a file named "-x.gz" is a file.
        arguments.add("--");
        arguments.add(split.file());
        return arguments;
    }

    /**
     * Starts {@code arguments} with standard input empty, standard output a pipe to read, and
     * standard error to {@code errors} (a file, not a pipe: a pipe nobody reads could fill and
     * stall gzstream while the caller reads standard output).
     *
     * @throws GzstreamException when the executable cannot be started
     */
    static Process start(List<String> arguments, File errors) {
        ProcessBuilder builder = new ProcessBuilder(arguments)
            .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")))
            .redirectError(ProcessBuilder.Redirect.to(errors));
        try {
            return builder.start();
        } catch (IOException error) {
            throw new GzstreamException("could not run " + arguments.get(0) + ": " + error.getMessage(), error);
        }
    }

    /** A new empty file for one child's standard error, removed by the caller. */
    static File errorFile() {
        try {
            return Files.createTempFile("gzstream-", ".stderr").toFile();
        } catch (IOException error) {
            throw new GzstreamException("could not create a file for gzstream's standard error: " + error.getMessage(), error);
        }
    }

    /**
     * What a child that exited with {@code status} said: its standard error, trimmed (gzstream
     * writes one line), or {@code exit status N} when it said nothing.
     */
    static String failureMessage(File errors, int status) {
        String text = "";
        try {
            byte[] bytes = Files.readAllBytes(errors.toPath());
            // One line is what gzstream writes; a bound keeps a runaway child's noise out of logs.
            int shown = Math.min(bytes.length, 4096);
            text = new String(bytes, 0, shown, StandardCharsets.UTF_8).strip();
        } catch (IOException unreadable) {
            // Fall through to the exit status alone.
        }
        return text.isEmpty() ? "exit status " + status : text;
    }

    /**
     * Runs a command to its end and returns its standard output as UTF-8 text.
     *
     * @throws GzstreamException with the child's standard error line when it exits non-zero,
     *     cannot be started, or is interrupted
     */
    static String runForText(List<String> arguments) {
        File errors = errorFile();
        try {
            Process child = start(arguments, errors);
            try {
                byte[] output = child.getInputStream().readAllBytes();
                int status = child.waitFor();
                if (status != 0) {
                    throw new GzstreamException(failureMessage(errors, status));
                }
                return new String(output, StandardCharsets.UTF_8);
            } catch (IOException error) {
                throw new GzstreamException("could not read from " + arguments.get(0) + ": " + error.getMessage(), error);
            } catch (InterruptedException interrupted) {
                Thread.currentThread().interrupt();
                throw new GzstreamException("interrupted while " + arguments.get(0) + " ran", interrupted);
            } finally {
                if (child.isAlive()) {
                    child.destroyForcibly();
                }
            }
        } finally {
            errors.delete();
        }
    }
}
