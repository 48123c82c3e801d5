package dev.segue.kstreams;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.URL;
import java.net.URLClassLoader;
import org.junit.jupiter.api.Test;

/** The agent's preload of RocksDB's native library (Kafka Streams' own RocksJava). */
class PreloadTest {
  @Test
  void loadsRocksDbsNativeLibraryFromTheAppsClasspath() throws Exception {
    String said = Preload.rocksdb(PreloadTest.class.getClassLoader());
    // said only once RocksJava's loadLibrary returned: the library is loaded
    assertTrue(said.startsWith("RocksDB's native library preloaded in "), said);
  }

  @Test
  void leavesAnAppWithoutRocksDbAlone() throws Exception {
    try (URLClassLoader none = new URLClassLoader(new URL[0], null)) {
      assertEquals("RocksDB is not on the class path: nothing to preload", Preload.rocksdb(none));
    }
  }

  @Test
  void runsOnADaemonThreadOfItsOwn() throws Exception {
    Thread thread = Preload.start(PreloadTest.class.getClassLoader());
    assertTrue(thread.isDaemon());
    assertEquals("segue-preload", thread.getName());
    thread.join(60_000);
    assertFalse(thread.isAlive(), "the preload did not end within a minute");
  }
}
