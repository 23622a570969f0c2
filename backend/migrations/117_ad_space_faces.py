"""Every face of every ad space, as a view: the zones of its furniture type's current version,
each repeated `face_quantity` times (faces numbered from 1). `sort_key` orders the faces of an ad
space by zone position, then face index. The admin "faces" list
(`backend/printing/faces.py`) reads it with each face's reservation and deposited visual."""


def migrate(migrator, database, fake=False, **kwargs):
    migrator.sql(
        """
        CREATE VIEW ad_space_face AS
        SELECT a.id || '/' || z.id || '/' || lpad(f.face_index::text, 4, '0') AS id,
               a.id || '/' || lpad(z.position::text, 4, '0') || '/' || z.id || '/' || lpad(f.face_index::text, 4, '0')
                   AS sort_key,
               a.id AS ad_space_id, a.store_id, v.id AS furniture_type_version_id, z.id AS zone_id,
               f.face_index
          FROM ad_space a
          JOIN furniture_type t ON t.id = a.promo_furniture_type_id
          JOIN furniture_type_version v ON v.furniture_type_id = t.id AND v.version = t.current_version
          JOIN furniture_zone z ON z.furniture_type_version_id = v.id
         CROSS JOIN LATERAL generate_series(1, z.face_quantity) AS f (face_index)
        """
    )


def rollback(migrator, database, fake=False, **kwargs):
    migrator.sql("DROP VIEW ad_space_face")
