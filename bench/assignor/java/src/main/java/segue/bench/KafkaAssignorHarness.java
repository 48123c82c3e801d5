package segue.bench;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalInt;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.UUID;

import org.apache.kafka.common.utils.Time;
import org.apache.kafka.streams.processor.TaskId;
import org.apache.kafka.streams.processor.assignment.AssignmentConfigs;
import org.apache.kafka.streams.processor.assignment.ProcessId;
import org.apache.kafka.streams.processor.internals.assignment.ClientState;
import org.apache.kafka.streams.processor.internals.assignment.HighAvailabilityTaskAssignor;
import org.apache.kafka.streams.processor.internals.assignment.RackAwareTaskAssignor;

/**
 * Replays Kafka Streams' HighAvailabilityTaskAssignor on one benchmark case: the first
 * assignment is timed (median of repeats, after warm-up), then probing rebalances are replayed
 * (every warmup and standby caught up by the next one) until the assignor asks for no more.
 *
 * Input (stdin, one item per line): "config LAG WARMUPS STANDBYS REPEATS MAX_ROUNDS",
 * "task SUB PARTITION STATEFUL(0|1)", "client NAME" (in the order their ids sort),
 * "active NAME TASK...", "standby NAME TASK...". Output: "key value" lines.
 */
public final class KafkaAssignorHarness {
    private static final long NO_STATE = 1_000_000_000L;
    private static final long LATEST_OFFSET = -2L;

    private KafkaAssignorHarness() {}

    public static void main(final String[] args) throws Exception {
        long lag = 0;
        int warmups = 2;
        int standbys = 0;
        int repeats = 5;
        int maxRounds = 1000;
        double budgetSeconds = 600;
        final Set<TaskId> all = new TreeSet<>();
        final Set<TaskId> stateful = new TreeSet<>();
        final Map<String, ProcessId> ids = new LinkedHashMap<>();
        final Map<String, Set<TaskId>> active = new HashMap<>();
        final Map<String, Set<TaskId>> standby = new HashMap<>();
        final BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        for (String line = in.readLine(); line != null; line = in.readLine()) {
            final String[] f = line.trim().split("\\s+");
            switch (f[0]) {
                case "config":
                    lag = Long.parseLong(f[1]);
                    warmups = Integer.parseInt(f[2]);
                    standbys = Integer.parseInt(f[3]);
                    repeats = Integer.parseInt(f[4]);
                    maxRounds = Integer.parseInt(f[5]);
                    budgetSeconds = Double.parseDouble(f[6]);
                    break;
                case "task": {
                    final TaskId t = new TaskId(Integer.parseInt(f[1]), Integer.parseInt(f[2]));
                    all.add(t);
                    if (f[3].equals("1")) {
                        stateful.add(t);
                    }
                    break;
                }
                case "client":
                    // ids sort as the names were listed (UUID order = signed long order)
                    ids.put(f[1], new ProcessId(new UUID(0L, ids.size() + 1)));
                    break;
                case "active":
                case "standby": {
                    final Map<String, Set<TaskId>> into = f[0].equals("active") ? active : standby;
                    final Set<TaskId> set = into.computeIfAbsent(f[1], k -> new HashSet<>());
                    for (int i = 2; i < f.length; i++) {
                        set.add(TaskId.parse(f[i]));
                    }
                    break;
                }
                default:
                    break;
            }
        }
        final AssignmentConfigs configs = new AssignmentConfigs(
            lag, warmups, standbys, 60_000L, Collections.emptyList(),
            OptionalInt.empty(), OptionalInt.empty(), "none");

        // rack awareness off (strategy "none"), as in the benchmark's cases: no racks
        final RackAwareTaskAssignor noRacks = new RackAwareTaskAssignor(
                null, Map.of(), Map.of(), Map.of(), Map.of(), null, configs, Time.SYSTEM) {
            @Override
            public synchronized boolean canEnableRackAwareAssignor() {
                return false;
            }
        };

        final Map<TaskId, String> initialOwner = new HashMap<>();
        active.forEach((c, ts) -> ts.forEach(t -> initialOwner.put(t, c)));
        final Map<String, Map<TaskId, Long>> lags = initialLags(ids.keySet(), active, standby, stateful);

        // time the first assignment: warm up the JIT, then take the median of the repeats;
        // after a warm-up slower than 5 s, one timed run (JIT noise is small next to it)
        final List<Double> times = new ArrayList<>();
        int warm = Math.max(2, repeats);
        for (int i = 0; i < warm + repeats && times.size() < repeats; i++) {
            final Map<ProcessId, ClientState> clients = clients(ids, active, standby, lags);
            final long start = System.nanoTime();
            new HighAvailabilityTaskAssignor().assign(clients, all, stateful, noRacks, configs);
            final double took = (System.nanoTime() - start) / 1e6;
            if (i >= warm) {
                times.add(took);
            } else if (took > 5000) {
                warm = i + 1;
                repeats = 1;
            }
        }
        Collections.sort(times);
        System.out.println("plan_ms " + times.get(times.size() / 2));

        // replay the probing rebalances until the assignor is satisfied
        Map<String, Set<TaskId>> curActive = active;
        Map<String, Set<TaskId>> curStandby = standby;
        Map<String, Map<TaskId, Long>> curLags = lags;
        int peak = 0;
        for (final String c : ids.keySet()) {
            peak = Math.max(peak, count(curActive.get(c), stateful));
        }
        int rounds = 0;
        boolean probing = true;
        final long replayStart = System.nanoTime();
        while (probing && rounds < maxRounds
                && (System.nanoTime() - replayStart) / 1e9 < budgetSeconds) {
            final Map<ProcessId, ClientState> clients = clients(ids, curActive, curStandby, curLags);
            probing = new HighAvailabilityTaskAssignor().assign(clients, all, stateful, noRacks, configs);
            rounds++;
            final Map<String, Set<TaskId>> nextActive = new HashMap<>();
            final Map<String, Set<TaskId>> nextStandby = new HashMap<>();
            for (final Map.Entry<String, ProcessId> e : ids.entrySet()) {
                final ClientState state = clients.get(e.getValue());
                nextActive.put(e.getKey(), new HashSet<>(state.activeTasks()));
                nextStandby.put(e.getKey(), new HashSet<>(state.standbyTasks()));
                peak = Math.max(peak, count(state.activeTasks(), stateful));
            }
            curLags = nextLags(ids.keySet(), curActive, nextActive, nextStandby, stateful);
            curActive = nextActive;
            curStandby = nextStandby;
        }
        int moved = 0;
        final Map<TaskId, String> finalOwner = new HashMap<>();
        curActive.forEach((c, ts) -> ts.forEach(t -> finalOwner.put(t, c)));
        for (final TaskId t : all) {
            if (initialOwner.containsKey(t) && !initialOwner.get(t).equals(finalOwner.get(t))) {
                moved++;
            }
        }
        final Map<String, Integer> finalCounts = new TreeMap<>();
        for (final String c : ids.keySet()) {
            finalCounts.put(c, count(curActive.get(c), stateful));
        }
        System.out.println("rounds " + rounds);
        System.out.println("converged " + !probing);
        System.out.println("moved " + moved);
        System.out.println("peak " + peak);
        System.out.println("final_max " + Collections.max(finalCounts.values()));
        System.out.println("final_min " + Collections.min(finalCounts.values()));
        for (final Map.Entry<String, Set<TaskId>> e : curActive.entrySet()) {
            final StringBuilder line = new StringBuilder("final " + e.getKey());
            for (final TaskId t : e.getValue()) {
                line.append(' ').append(t);
            }
            System.out.println(line);
        }
    }

    private static int count(final Set<TaskId> tasks, final Set<TaskId> stateful) {
        if (tasks == null) {
            return 0;
        }
        int n = 0;
        for (final TaskId t : tasks) {
            if (stateful.contains(t)) {
                n++;
            }
        }
        return n;
    }

    private static Map<String, Map<TaskId, Long>> initialLags(
            final Set<String> clients, final Map<String, Set<TaskId>> active,
            final Map<String, Set<TaskId>> standby, final Set<TaskId> stateful) {
        final Map<String, Map<TaskId, Long>> lags = new HashMap<>();
        for (final String c : clients) {
            final Map<TaskId, Long> m = new HashMap<>();
            for (final TaskId t : stateful) {
                if (active.getOrDefault(c, Set.of()).contains(t)) {
                    m.put(t, LATEST_OFFSET);
                } else if (standby.getOrDefault(c, Set.of()).contains(t)) {
                    m.put(t, 0L);
                } else {
                    m.put(t, NO_STATE);
                }
            }
            lags.put(c, m);
        }
        return lags;
    }

    private static Map<String, Map<TaskId, Long>> nextLags(
            final Set<String> clients, final Map<String, Set<TaskId>> before,
            final Map<String, Set<TaskId>> active, final Map<String, Set<TaskId>> standby,
            final Set<TaskId> stateful) {
        final Map<String, Map<TaskId, Long>> lags = new HashMap<>();
        for (final String c : clients) {
            final Map<TaskId, Long> m = new HashMap<>();
            for (final TaskId t : stateful) {
                if (active.get(c).contains(t)) {
                    m.put(t, LATEST_OFFSET);
                } else if (standby.get(c).contains(t) || before.getOrDefault(c, Set.of()).contains(t)) {
                    m.put(t, 0L); // warmups and standbys caught up; a former owner's copy is fresh
                } else {
                    m.put(t, NO_STATE);
                }
            }
            lags.put(c, m);
        }
        return lags;
    }

    private static Map<ProcessId, ClientState> clients(
            final Map<String, ProcessId> ids, final Map<String, Set<TaskId>> active,
            final Map<String, Set<TaskId>> standby, final Map<String, Map<TaskId, Long>> lags) {
        final Map<ProcessId, ClientState> clients = new TreeMap<>();
        for (final Map.Entry<String, ProcessId> e : ids.entrySet()) {
            final String c = e.getKey();
            clients.put(e.getValue(), new ClientState(
                new HashSet<>(active.getOrDefault(c, Set.of())),
                new HashSet<>(standby.getOrDefault(c, Set.of())),
                new HashMap<>(lags.get(c)), Collections.emptyMap(), 1, e.getValue()));
        }
        return clients;
    }
}
