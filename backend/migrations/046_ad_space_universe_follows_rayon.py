"""An ad space placed in a rayon is in that rayon's universe: a composite foreign key to
(rayon.id, rayon.universe_id) refuses any other universe and, ON UPDATE CASCADE, moves the ad
spaces with their rayon when an admin moves it to another universe. Rows a move already left
behind are repaired first."""


def migrate(migrator, database, fake=False, **kwargs):
    migrator.sql("ALTER TABLE rayon ADD CONSTRAINT rayon_id_universe_key UNIQUE (id, universe_id)")
    migrator.sql(
        """
        UPDATE ad_space SET placement_universe_id = rayon.universe_id
          FROM rayon
         WHERE rayon.id = ad_space.placement_rayon_id AND ad_space.placement_universe_id <> rayon.universe_id
        """
    )
    migrator.sql(
        """
        ALTER TABLE ad_space ADD CONSTRAINT ad_space_rayon_universe_fkey
            FOREIGN KEY (placement_rayon_id, placement_universe_id) REFERENCES rayon (id, universe_id)
            ON UPDATE CASCADE ON DELETE RESTRICT
        """
    )


def rollback(migrator, database, fake=False, **kwargs):
    migrator.sql("ALTER TABLE ad_space DROP CONSTRAINT ad_space_rayon_universe_fkey")
    migrator.sql("ALTER TABLE rayon DROP CONSTRAINT rayon_id_universe_key")
