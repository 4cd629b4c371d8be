package gzstream.spark;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.util.Arrays;
import java.util.List;
import org.apache.spark.sql.util.CaseInsensitiveStringMap;

/**
 * The options of one read, checked: the paths {@code load} was given, {@code splitSize} in
 * bytes, the {@code gzstream} option as given (resolved later on each machine), and
 * {@code threads}. Immutable.
 *
 * @param paths one or more paths, globs or directories, as given
 * @param splitSize plain bytes per split, at least 1
 * @param gzstream the {@code gzstream} option, or {@code null}
 * @param threads the threads each task's gzstream decodes on, 1 to 256, or {@code null} for the
 *     task's cores ({@link Gzstream#taskThreads})
 */
record ReadOptions(List<String> paths, long splitSize, String gzstream, Integer threads) {
    static final String DEFAULT_SPLIT_SIZE = "128m";

    /**
     * Reads {@code path} (one {@code load} argument) or {@code paths} (Spark's JSON array for
     * several), {@code splitSize}, {@code gzstream} and {@code threads}.
     *
     * @throws IllegalArgumentException when no path is given, splitSize is not a size or threads
     *     not a whole number from 1 to 256
     */
    static ReadOptions of(CaseInsensitiveStringMap options) {
        List<String> paths;
        if (options.containsKey("paths")) {
            try {
                paths = Arrays.asList(new ObjectMapper().readValue(options.get("paths"), String[].class));
            } catch (JsonProcessingException error) {
                throw new IllegalArgumentException("paths is not a JSON array of strings: " + options.get("paths"), error);
            }
            if (options.containsKey("path")) {
                paths = new java.util.ArrayList<>(paths);
                paths.add(0, options.get("path"));
            }
        } else if (options.containsKey("path")) {
            paths = List.of(options.get("path"));
        } else {
            paths = List.of();
        }
        if (paths.isEmpty() || paths.stream().anyMatch(path -> path == null || path.isEmpty())) {
            throw new IllegalArgumentException(
                GzipLinesSource.NAME + " needs a path: spark.read.format(\"" + GzipLinesSource.NAME + "\").load(\"logs/*.gz\")");
        }
        long splitSize = Gzstream.parseSize(options.getOrDefault("splitSize", DEFAULT_SPLIT_SIZE));
        Integer threads = options.containsKey("threads") ? Gzstream.parseThreads(options.get("threads")) : null;
        return new ReadOptions(List.copyOf(paths), splitSize, options.get("gzstream"), threads);
    }
}
